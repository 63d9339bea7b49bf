%% Runs one concurrency workload on the Erlang VM and prints one JSON line,
%% following docs/protocol.md. Every task is a bare process (spawn/1);
%% every channel is a mailbox. Started by impls.toml's run argv:
%%   erl +P 2097152 -noshell ... -s bench main -extra WORKLOAD --n N ...
-module(bench).

-export([main/0, cli/1, parse/1, run/1, run/2, collector/0, prime/1, warmup/2, warmup/4, report/2,
         sleep/2, chain/1, bounded/2, skynet/1]).

-define(USAGE,
"usage: bench WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]

  WORKLOAD         sleep, chain, bounded or skynet (docs/protocol.md)
  --n N            number of tasks (> 0; skynet: a power of ten)
  --iterations K   in-process iterations, the first one cold (> 0)
  --buffer B       channel capacity, required by bounded (>= 0; 0 = rendezvous)
  --duration-ms D  how long each task sleeps, required by sleep (> 0)
  --warmup-ms W    run the workload untimed until W ms have passed (at most 10000 runs) before the timed iterations (default 0)
").

-define(INT64_MAX, 9223372036854775807).

%% The warm-up stops after this many runs even if they total less than W ms
%% (docs/protocol.md): with N = 10 a run takes microseconds, and W ms of them
%% would make the JSON line huge.
-define(MAX_WARMUP_RUNS, 10000).

%% docs/protocol.md's priming: chain runs one untimed chain of
%% min(N, ?PRIME_LINKS) links before the warm-up and the first timed pass.
-define(PRIME_LINKS, 1000).

%% Entry point (`-s bench main`): the exit status is always the one set
%% here, and no error ever escapes as a stack trace or a crash dump.
main() ->
    Status = try cli(init:get_plain_arguments())
             catch Class:Reason ->
                 io:put_chars(standard_error,
                              io_lib:format("bench: ~w: ~W~n", [Class, Reason, 12])),
                 1
             end,
    halt(Status).

%% The protocol around parse/1 and run/1: returns the exit status.
cli(Args) ->
    case parse(Args) of
        help ->
            io:put_chars(?USAGE),
            0;
        {error, Message} ->
            io:put_chars(standard_error, ["bench: ", Message, $\n]),
            2;
        {ok, Config} ->
            case run(Config) of
                {error, Message} ->
                    io:put_chars(standard_error, ["bench: error: ", Message, $\n]),
                    1;
                Runs ->
                    io:put_chars([report(Config, Runs), $\n]),
                    0
            end
    end.

%% ---------------------------------------------------------------- arguments

%% What each workload requires besides --n and --iterations.
needs("sleep") -> {ok, ["duration-ms"]};
needs("chain") -> {ok, []};
needs("bounded") -> {ok, ["buffer"]};
needs("skynet") -> {ok, []};
needs(_) -> error.

%% parse(Args) -> help | {ok, #{workload, n, iterations, buffer, duration_ms,
%%                              warmup_ms}}
%%              | {error, OneLine}.
parse(Args) ->
    case lists:any(fun(A) -> lists:member(A, ["--help", "-h", "-help"]) end, Args) of
        true -> help;
        false -> parse_workload(Args)
    end.

parse_workload([]) ->
    {error, "missing WORKLOAD (sleep, chain, bounded or skynet); --help for usage"};
parse_workload([Workload | Options]) ->
    case needs(Workload) of
        error ->
            {error, ["unknown workload ", q(Workload), " (want sleep, chain, bounded or skynet)"]};
        {ok, Needed} ->
            case parse_options(Options, #{}) of
                {error, _} = E -> E;
                {ok, Opts} -> check(Workload, Needed, Opts)
            end
    end.

parse_options([], Opts) ->
    {ok, Opts};
parse_options(["--" ++ Name = Flag | Rest], Opts) ->
    case {minimum(Name), Rest} of
        {error, _} -> {error, ["unknown option ", q(Flag)]};
        {_, []} -> {error, io_lib:format("~s needs a value", [Flag])};
        {Min, [Value | Rest1]} ->
            case integer(Value, Min) of
                {ok, V} -> parse_options(Rest1, Opts#{Name => V});
                {error, Why} -> {error, [Flag, " ", q(Value), ": ", Why]}
            end
    end;
parse_options([Other | _], _) ->
    {error, ["unexpected argument ", q(Other)]}.

%% A quoted argument on one line, whatever it holds.
q(S) -> io_lib:write_string(S).

minimum("n") -> 1;
minimum("iterations") -> 1;
minimum("buffer") -> 0;
minimum("duration-ms") -> 1;
minimum("warmup-ms") -> 0;
minimum(_) -> error.

%% A base-10 integer (an optional sign, then digits only) that fits in 64 bits.
integer(S, Min) ->
    Digits = case S of [$- | D] -> D; [$+ | D] -> D; D -> D end,
    case Digits =/= [] andalso lists:all(fun(C) -> C >= $0 andalso C =< $9 end, Digits) of
        false -> {error, "not an integer"};
        true ->
            V = list_to_integer(S),
            if V > ?INT64_MAX; V < -?INT64_MAX - 1 -> {error, "out of range"};
               V < Min -> {error, io_lib:format("must be >= ~b", [Min])};
               true -> {ok, V}
            end
    end.

check(Workload, Needed, Opts) ->
    case [O || O <- ["n", "iterations" | Needed], not maps:is_key(O, Opts)] of
        [Missing | _] ->
            {error, io_lib:format("~s needs --~s", [Workload, Missing])};
        [] ->
            N = maps:get("n", Opts),
            Skynet = Workload =:= "skynet",
            PowerOfTen = is_power_of_ten(N),
            if Skynet, not PowerOfTen ->
                   {error, io_lib:format("skynet needs --n a power of ten, not ~b", [N])};
               true ->
                   {ok, #{workload => Workload, n => N,
                          iterations => maps:get("iterations", Opts),
                          buffer => maps:get("buffer", Opts, null),
                          duration_ms => maps:get("duration-ms", Opts, null),
                          warmup_ms => maps:get("warmup-ms", Opts, 0)}}
            end
    end.

is_power_of_ten(1) -> true;
is_power_of_ten(N) when N rem 10 =:= 0 -> is_power_of_ten(N div 10);
is_power_of_ten(_) -> false.

%% ---------------------------------------------------------------- running

%% docs/protocol.md, "Collection between passes": before each pass (warm-up
%% runs too) that follows the priming or another pass, outside the clock, a
%% full collection of the process that runs the passes, so that no pass
%% collects the previous one's garbage inside its clock. Every task's process
%% has ended with its pass, its heap freed; what a pass leaves is in this
%% process's heap. BENCH_COLLECT=0 (exactly) skips it.
%% collector() -> fun() | none.
collector() ->
    case os:getenv("BENCH_COLLECT") of
        "0" -> none;
        _ -> fun erlang:garbage_collect/0
    end.

%% run(Config[, Collect]) -> {Results, IterNs, SpawnNs | null, WarmupResults,
%% WarmupNs, Primed | null}, each list in run order, or {error, OneLine} when
%% the priming's answer is wrong. The priming, then the warm-up runs come
%% first; neither is an iteration. Collect is collector()'s answer, or the
%% tests' stand-in, called before each pass but a fresh process's first.
run(Config) ->
    run(Config, collector()).

run(#{iterations := K} = Config, Collect) ->
    case prime(Config) of
        {error, _} = Error ->
            Error;
        {ok, Primed} ->
            {WarmupResults, WarmupNs} = warmup(Config, ?MAX_WARMUP_RUNS, Collect, Primed =/= null),
            Ran = Primed =/= null orelse WarmupResults =/= [],
            {Results, IterNs, SpawnNs} = iterations(Config, Collect, Ran, K, [], [], null),
            {Results, IterNs, SpawnNs, WarmupResults, WarmupNs, Primed}
    end.

iterations(_Config, _Collect, _Ran, 0, Results, IterNs, SpawnNs) ->
    {lists:reverse(Results), lists:reverse(IterNs), SpawnNs};
iterations(Config, Collect, Ran, K, Results, IterNs, SpawnNs) ->
    {Result, Spawn, Ns} = timed(Config, Collect, Ran),
    SpawnNs1 = case SpawnNs of null -> Spawn; _ -> SpawnNs end,
    iterations(Config, Collect, true, K - 1, [Result | Results], [Ns | IterNs], SpawnNs1).

%% prime(Config) -> {ok, P | null} | {error, OneLine}: the priming
%% (docs/protocol.md): for chain, one run of the same code (iteration/2) on
%% P = min(N, ?PRIME_LINKS) links, untimed, its answer checked; null for the
%% other workloads.
prime(#{workload := "chain", n := N} = Config) ->
    P = min(N, ?PRIME_LINKS),
    case iteration(Config#{n := P}, null) of
        {P, _} -> {ok, P};
        {Answer, _} ->
            {error, io_lib:format("the priming chain of ~b links answered ~w, not ~b",
                                  [P, Answer, P])}
    end;
prime(_Config) ->
    {ok, null}.

%% warmup(Config, MaxRuns[, Collect, Ran]) -> {WarmupResults, WarmupNs}:
%% another warm-up run while the runs so far total less than W ms and number
%% fewer than MaxRuns (docs/protocol.md; run/2 passes ?MAX_WARMUP_RUNS):
%% W = 0 runs none, W > 0 at least one. Ran: whether the priming ran before
%% (false for warmup/2).
warmup(Config, MaxRuns) ->
    warmup(Config, MaxRuns, collector(), false).

warmup(#{warmup_ms := W} = Config, MaxRuns, Collect, Ran) ->
    warmup(Config, Collect, Ran, W * 1000000, MaxRuns, 0, [], []).

warmup(Config, Collect, Ran, BudgetNs, RunsLeft, TotalNs, Results, Times)
  when TotalNs < BudgetNs, RunsLeft > 0 ->
    {Result, _Spawn, Ns} = timed(Config, Collect, Ran),
    warmup(Config, Collect, true, BudgetNs, RunsLeft - 1, TotalNs + Ns, [Result | Results],
           [Ns | Times]);
warmup(_Config, _Collect, _Ran, _BudgetNs, _RunsLeft, _TotalNs, Results, Times) ->
    {lists:reverse(Results), lists:reverse(Times)}.

%% One run of the workload on the iterations' clock: {Result, SpawnNs | null, Ns}.
%% The collection comes first, before the clock, when something Ran before
%% in this process (the priming or a pass): nothing of ours to collect
%% before the first pass of a fresh process, and a full collection there
%% only adds the collector's own structures to the peak RSS (Java's G1:
%% sleep N = 1, 44 -> 51 MiB).
timed(Config, Collect, Ran) ->
    case Ran andalso Collect =/= none of
        true -> Collect();
        false -> ok
    end,
    T0 = erlang:monotonic_time(nanosecond),
    {Result, Spawn} = iteration(Config, T0),
    {Result, Spawn, erlang:monotonic_time(nanosecond) - T0}.

iteration(#{workload := "sleep", n := N, duration_ms := D}, T0) -> sleep(N, D, T0);
iteration(#{workload := "chain", n := N}, _) -> {chain(N), null};
iteration(#{workload := "bounded", n := N, buffer := B}, _) -> {bounded(N, B), null};
iteration(#{workload := "skynet", n := N}, _) -> {skynet(N), null}.

%% ---------------------------------------------------------------- workloads

%% sleep: N processes each wait D ms in `receive after` (the VM's timer
%% wheel, no message involved), then send `done` to the parent, which counts
%% N of them. Returns {Completed, SpawnNs}.
sleep(N, D) ->
    sleep(N, D, erlang:monotonic_time(nanosecond)).

sleep(N, D, T0) ->
    Parent = self(),
    spawn_sleepers(N, fun() -> receive after D -> Parent ! done end end),
    SpawnNs = erlang:monotonic_time(nanosecond) - T0,
    {count_done(N, 0), SpawnNs}.

spawn_sleepers(0, _) -> ok;
spawn_sleepers(N, Sleeper) -> spawn(Sleeper), spawn_sleepers(N - 1, Sleeper).

count_done(0, Count) -> Count;
count_done(N, Count) -> receive done -> count_done(N - 1, Count + 1) end.

%% chain: N relay processes, each receives X from its mailbox and sends X+1
%% to the next one; the last sends to the parent. Built back to front (each
%% relay is spawned knowing its successor); the parent sends 0 to the first.
chain(N) ->
    First = relays(N, self()),
    First ! 0,
    receive X -> X end.

relays(0, Next) -> Next;
relays(N, Next) -> relays(N - 1, spawn(fun() -> receive X -> Next ! X + 1 end end)).

%% bounded: one consumer process is the channel (README.md, "bounded"). A
%% producer's send is a call: it sends {self(), I} and waits for the
%% consumer's `taken`, which the consumer sends as it receives the value. A
%% send therefore completes only when its value is taken (B = 0's rendezvous),
%% and no value is ever sent-but-not-taken, within every capacity B >= 1. The
%% consumer is spawned before the producers; the parent waits for its sum.
bounded(N, _Buffer) ->
    Parent = self(),
    Consumer = spawn(fun() -> Parent ! {sum, consume(N, 0)} end),
    produce(N - 1, Consumer),
    receive {sum, Sum} -> Sum end.

produce(-1, _) -> ok;
produce(I, Consumer) ->
    spawn(fun() -> Consumer ! {self(), I}, receive taken -> ok end end),
    produce(I - 1, Consumer).

consume(0, Sum) -> Sum;
consume(N, Sum) ->
    receive {Producer, V} -> Producer ! taken, consume(N - 1, Sum + V) end.

%% skynet: a tree of processes; a node spawns its 10 children, then sums the
%% 10 numbers they send back (its mailbox holds nothing else) and sends the
%% sum to its parent.
skynet(N) ->
    Parent = self(),
    spawn(fun() -> node(Parent, 0, N) end),
    receive Sum -> Sum end.

node(Parent, Num, 1) ->
    Parent ! Num;
node(Parent, Num, Size) ->
    Self = self(),
    Child = Size div 10,
    spawn_children(Self, Num, Child, 10),
    Parent ! sum_children(10, 0).

spawn_children(_, _, _, 0) -> ok;
spawn_children(Self, Num, Child, K) ->
    spawn(fun() -> node(Self, Num, Child) end),
    spawn_children(Self, Num + Child, Child, K - 1).

sum_children(0, Sum) -> Sum;
sum_children(K, Sum) -> receive X -> sum_children(K - 1, Sum + X) end.

%% ---------------------------------------------------------------- output

report(#{workload := W, n := N, buffer := B},
       {Results, IterNs, SpawnNs, WarmupResults, WarmupNs, Primed}) ->
    Spawn = case SpawnNs of null -> []; _ -> [", \"spawn_ns\": ", integer_to_list(SpawnNs)] end,
    Prime = case Primed of null -> []; _ -> [", \"primed\": ", integer_to_list(Primed)] end,
    ["{\"workload\": \"", W, "\", \"n\": ", integer_to_list(N),
     ", \"buffer\": ", json_int(B),
     ", \"result\": ", integer_to_list(lists:last(Results)),
     ", \"results\": ", json_ints(Results),
     ", \"iter_ns\": ", json_ints(IterNs), Spawn,
     ", \"warmup_ns\": ", json_ints(WarmupNs),
     ", \"warmup_results\": ", json_ints(WarmupResults), Prime,
     ", \"runtime\": \"", runtime(), "\"}"].

json_int(null) -> "null";
json_int(I) -> integer_to_list(I).

json_ints(Is) -> [$[, lists:join(", ", [integer_to_list(I) || I <- Is]), $]].

%% "Erlang/OTP 25.2.3 (erts-13.1.5)"
runtime() ->
    Release = erlang:system_info(otp_release),
    File = filename:join([code:root_dir(), "releases", Release, "OTP_VERSION"]),
    Otp = case file:read_file(File) of
              {ok, V} -> string:trim(binary_to_list(V));
              {error, _} -> Release
          end,
    ["Erlang/OTP ", Otp, " (erts-", erlang:system_info(version), ")"].
