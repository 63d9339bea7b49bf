%% eunit suite for bench.erl (run by `./toolchain.sh test`): argument
%% parsing, and each workload's answer at small sizes. The harness's
%% conformance test checks the program's invocation protocol end to end.
-module(bench_tests).
-compile([export_all, nowarn_export_all]). % eunit finds the *_test and *_test_ functions

%% Plain matches instead of eunit.hrl's macros: Debian ships that header in
%% erlang-dev, which toolchain.sh does not install for this alone.

parse_good_test() ->
    {ok, #{workload := "bounded", n := 10, iterations := 2, buffer := 0,
           duration_ms := null, warmup_ms := 0}} =
        bench:parse(["bounded", "--n", "10", "--iterations", "2", "--buffer", "0"]),
    {ok, #{warmup_ms := 250}} =
        bench:parse(["chain", "--warmup-ms", "250", "--n", "10", "--iterations", "2"]),
    {ok, #{warmup_ms := 0}} =
        bench:parse(["skynet", "--n", "10", "--iterations", "2", "--warmup-ms", "0"]),
    {ok, #{workload := "sleep", duration_ms := 5}} =
        bench:parse(["sleep", "--iterations", "1", "--n", "3", "--duration-ms", "5"]),
    {ok, #{n := 1000000}} = bench:parse(["skynet", "--n", "1000000", "--iterations", "1"]),
    help = bench:parse(["chain", "--help"]),
    help = bench:parse(["-h"]).

%% docs/protocol.md's one table of bad input (docs/protocol-bad-input.json,
%% which test_conformance.py runs too), as docs/protocol-bad-input.tsv, its
%% line-per-case form for tests without a JSON reader (OTP 25 has none): the
%% cases for the workloads we declare (impls.toml). "{w}" is a workload's
%% name, "{required}" its other required options (spliced).
-define(DECLARED, ["sleep", "chain", "bounded", "skynet"]).

bad_input_table() ->
    {ok, Text} = file:read_file("../docs/protocol-bad-input.tsv"),
    Rows = [string:split(Line, "\t", all)
            || Line <- string:split(binary_to_list(Text), "\n", all),
               Line =/= [], hd(Line) =/= $#],
    Required = maps:from_list([{W, Args} || ["required", W | Args] <- Rows]),
    Table = lists:append([bad_input_case(When, Args, Required)
                          || ["case", _Name, When | Args] <- Rows]),
    true = length(Table) > 20,
    Table.

bad_input_case(When, Args, Required) ->
    Workloads = case When of
        "always" -> [none];
        "declared" -> [W || W <- lists:sort(maps:keys(Required)), lists:member(W, ?DECLARED)];
        "undeclared" -> [W || W <- lists:sort(maps:keys(Required)), not lists:member(W, ?DECLARED)];
        _ -> case lists:member(When, ?DECLARED) of true -> [none]; false -> [] end
    end,
    [lists:append([case A of
                       "{w}" -> [W];
                       "{required}" -> maps:get(W, Required);
                       _ -> [A]
                   end || A <- Args])
     || W <- Workloads].

%% The table, then ours.
parse_bad_test_() ->
    Bad = bad_input_table() ++
          [["chain", "--n", "1.5", "--iterations", "1"],
           ["chain", "--n", "", "--iterations", "1"],
           ["chain", "--n", "9223372036854775808", "--iterations", "1"],
           ["chain", "--n", "1", "--iterations", "1", "extra"],
           ["skynet", "--n", "20", "--iterations", "1"],
           ["skynet", "--n", "11", "--iterations", "1"],
           ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "1.5"],
           ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "9223372036854775808"]],
    [{lists:flatten(io_lib:format("~p", [Args])),
      fun() -> {error, _} = bench:parse(Args) end} || Args <- Bad].

error_is_one_line_test() ->
    {error, Message} = bench:parse(["chain", "--n", "a\nb", "--iterations", "1"]),
    nomatch = string:find(lists:flatten(Message), "\n").

%% Warm-up runs until their total reaches W ms: the last one crosses it, the
%% ones before it do not; the K iterations come after, as many as without.
warmup_test() ->
    {ok, Config} = bench:parse(["bounded", "--n", "1000", "--buffer", "1",
                                "--iterations", "3", "--warmup-ms", "100"]),
    Sum = 1000 * 999 div 2,
    {[Sum, Sum, Sum], [_, _, _], null, WarmupResults, WarmupNs, null} = bench:run(Config),
    true = length(WarmupNs) >= 1,
    true = length(WarmupResults) =:= length(WarmupNs),
    true = lists:all(fun(R) -> R =:= Sum end, WarmupResults),
    true = lists:sum(WarmupNs) >= 100000000,
    true = lists:sum(WarmupNs) - lists:last(WarmupNs) < 100000000.

%% The run cap stops the warm-up long before W ms: cap 3 with W = 60 s makes
%% exactly 3 runs, at once.
warmup_cap_test() ->
    {ok, Config} = bench:parse(["bounded", "--n", "10", "--buffer", "1",
                                "--iterations", "1", "--warmup-ms", "60000"]),
    T0 = erlang:monotonic_time(millisecond),
    {[45, 45, 45], [_, _, _]} = bench:warmup(Config, 3),
    true = erlang:monotonic_time(millisecond) - T0 < 5000.

no_warmup_test() ->
    {ok, Config} = bench:parse(["chain", "--n", "10", "--iterations", "2"]),
    {[10, 10], [_, _], null, [], [], 10} = bench:run(Config).

%% docs/protocol.md's priming: chain primes one chain of min(N, 1000) links,
%% reported as Primed; the K iterations are as many as without it.
prime_test_() ->
    [fun() ->
         {ok, Config} = bench:parse(["chain", "--n", integer_to_list(N), "--iterations", "3"]),
         P = min(N, 1000),
         {ok, P} = bench:prime(Config),
         {[N, N, N], [_, _, _], null, [], [], P} = bench:run(Config)
     end || N <- [5, 2000]].

no_priming_but_chain_test() ->
    {ok, Config} = bench:parse(["skynet", "--n", "10", "--iterations", "1"]),
    {ok, null} = bench:prime(Config),
    {[45], [_], null, [], [], null} = bench:run(Config).

%% The priming runs first and outside the clock: a call trace of the process
%% running bench:run/1 sees chain(P) before any timed/3 call, then one
%% chain(N) inside each timed/3 (warm-up runs and iterations).
priming_is_not_timed_test_() ->
    [fun() -> priming_is_not_timed(N, W) end || {N, W} <- [{5, 0}, {2000, 0}, {2000, 5}]].

priming_is_not_timed(N, W) ->
    {ok, Config} = bench:parse(["chain", "--n", integer_to_list(N), "--iterations", "2",
                                "--warmup-ms", integer_to_list(W)]),
    Self = self(),
    Runner = spawn(fun() -> receive go -> Self ! {ran, self(), bench:run(Config)} end end),
    erlang:trace_pattern({bench, chain, 1}, true, [local]),
    erlang:trace_pattern({bench, timed, 3}, true, [local]),
    1 = erlang:trace(Runner, true, [call]),
    Runner ! go,
    Runs = receive {ran, Runner, R} -> R after 30000 -> error(timeout) end,
    Ref = erlang:trace_delivered(Runner),
    receive {trace_delivered, Runner, Ref} -> ok end,
    erlang:trace_pattern({bench, '_', '_'}, false, [local]),
    Calls = trace_calls(Runner, []),
    P = min(N, 1000),
    {[N, N], [_, _], null, WarmupResults, _, P} = Runs,
    Timed = lists:flatten(lists:duplicate(length(WarmupResults) + 2, [timed, N])),
    [P | Timed] = Calls.

trace_calls(Pid, Calls) ->
    receive
        {trace, Pid, call, {bench, chain, [Links]}} -> trace_calls(Pid, [Links | Calls]);
        {trace, Pid, call, {bench, timed, [_, _, _]}} -> trace_calls(Pid, [timed | Calls])
    after 0 -> lists:reverse(Calls)
    end.

%% docs/protocol.md, "Collection between passes": one erlang:garbage_collect()
%% of the process running the passes before each warm-up run and each timed
%% pass that follows the priming or another pass, before the clock; none
%% before the first pass when nothing ran before it; none under
%% BENCH_COLLECT=0.

%% Runs bench:run(Config) (collector()'s collection) in a process of its own
%% under BENCH_COLLECT = Setting (false: unset), with a call trace of
%% chain/1, bounded/2, timed/3 and erlang:garbage_collect/0 there:
%% {Runs, Calls}, Calls in order (N for chain and bounded, timed, gc).
traced_run(Config, Setting) ->
    Saved = os:getenv("BENCH_COLLECT"),
    case Setting of
        false -> os:unsetenv("BENCH_COLLECT");
        _ -> os:putenv("BENCH_COLLECT", Setting)
    end,
    Self = self(),
    Runner = spawn(fun() -> receive go -> Self ! {ran, self(), bench:run(Config)} end end),
    Patterns = [{bench, chain, 1}, {bench, bounded, 2}, {bench, timed, 3},
                {erlang, garbage_collect, 0}],
    try
        [erlang:trace_pattern(MFA, true, [local]) || MFA <- Patterns],
        1 = erlang:trace(Runner, true, [call]),
        Runner ! go,
        Runs = receive {ran, Runner, R} -> R after 30000 -> error(timeout) end,
        Ref = erlang:trace_delivered(Runner),
        receive {trace_delivered, Runner, Ref} -> ok end,
        {Runs, collect_calls(Runner, [])}
    after
        [erlang:trace_pattern(MFA, false, [local]) || MFA <- Patterns],
        case Saved of
            false -> os:unsetenv("BENCH_COLLECT");
            _ -> os:putenv("BENCH_COLLECT", Saved)
        end
    end.

collect_calls(Pid, Calls) ->
    receive
        {trace, Pid, call, {bench, chain, [N]}} -> collect_calls(Pid, [N | Calls]);
        {trace, Pid, call, {bench, bounded, [N, _]}} -> collect_calls(Pid, [N | Calls]);
        {trace, Pid, call, {bench, timed, [_, _, _]}} -> collect_calls(Pid, [timed | Calls]);
        {trace, Pid, call, {erlang, garbage_collect, []}} -> collect_calls(Pid, [gc | Calls])
    after 0 -> lists:reverse(Calls)
    end.

collect_before_each_pass_test_() ->
    [{lists:flatten(io_lib:format("~s N=~b W=~b", [Workload, N, W])),
      fun() -> collect_before_each_pass(Workload, N, W) end}
     || {Workload, N, W} <- [{"chain", 5, 0}, {"chain", 2000, 20}, {"bounded", 100, 0},
                             {"bounded", 100, 20}, {"skynet", 10, 0}, {"skynet", 10, 20}]].

collect_before_each_pass(Workload, N, W) ->
    {ok, Config} = bench:parse([Workload, "--n", integer_to_list(N), "--iterations", "3",
                                "--buffer", "1", "--warmup-ms", integer_to_list(W)]),
    {Runs, Calls} = traced_run(Config, false),
    {[_, _, _], [_, _, _], null, WarmupResults, _, Primed} = Runs,
    true = (W =:= 0) orelse length(WarmupResults) >= 2,
    %% skynet's own calls are not traced: its passes show as timed, gc.
    Pass = case Workload of "skynet" -> [timed, gc]; _ -> [timed, gc, N] end,
    Passes = lists:append(lists:duplicate(length(WarmupResults) + 3, Pass)),
    %% Without priming the first pass (warm-up run or iteration 1) is the
    %% first thing the process runs: no collection before it.
    Expected = case Primed of
                   null -> Passes -- [gc];
                   P -> [P | Passes]
               end,
    Expected = Calls.

%% The same, spelled out: no priming and no warm-up, so iteration 1 has no
%% collection and iteration 2 has one; with priming, iteration 1 has one.
first_pass_collection_test() ->
    {ok, Bounded} = bench:parse(["bounded", "--n", "100", "--buffer", "1", "--iterations", "2"]),
    {_, Calls} = traced_run(Bounded, false),
    [timed, 100, timed, gc, 100] = Calls,
    {ok, Chain} = bench:parse(["chain", "--n", "5", "--iterations", "2"]),
    {_, Calls1} = traced_run(Chain, false),
    [5, timed, gc, 5, timed, gc, 5] = Calls1.

%% BENCH_COLLECT=0, exactly, skips it: the same passes, no collection.
bench_collect_0_test() ->
    {ok, Config} = bench:parse(["chain", "--n", "2000", "--iterations", "3", "--warmup-ms", "5"]),
    {Runs, Calls} = traced_run(Config, "0"),
    {[2000, 2000, 2000], [_, _, _], null, WarmupResults, _, 1000} = Runs,
    true = length(WarmupResults) >= 1,
    Expected = [1000 | lists:append(lists:duplicate(length(WarmupResults) + 3, [timed, 2000]))],
    Expected = Calls,
    %% Any other value collects.
    lists:foreach(
      fun(V) ->
          {_, Calls1} = traced_run(Config#{warmup_ms := 0}, V),
          [1000, timed, gc, 2000, timed, gc, 2000, timed, gc, 2000] = Calls1
      end, ["", "1", "00", "false"]).

%% collector/0 reads BENCH_COLLECT each time: none for "0", else the BIF.
collector_test() ->
    Saved = os:getenv("BENCH_COLLECT"),
    try
        os:putenv("BENCH_COLLECT", "0"),
        none = bench:collector(),
        os:unsetenv("BENCH_COLLECT"),
        Gc = fun erlang:garbage_collect/0,
        Gc = bench:collector(),
        os:putenv("BENCH_COLLECT", "1"),
        Gc = bench:collector()
    after
        case Saved of
            false -> os:unsetenv("BENCH_COLLECT");
            _ -> os:putenv("BENCH_COLLECT", Saved)
        end
    end.

%% The collection is outside the clock: a stand-in that takes 200 ms, passed
%% to run/2, is called once before each pass but the first (bounded has no
%% priming), and no pass took 200 ms. Run in the test process: bounded's
%% receive is selective, so the stand-in's messages stay out of its way.
collection_is_not_timed_test() ->
    {ok, Config} = bench:parse(["bounded", "--n", "100", "--buffer", "0", "--iterations", "3",
                                "--warmup-ms", "1"]),
    Self = self(),
    Collect = fun() -> Self ! {collected, self()}, timer:sleep(200) end,
    Sum = 100 * 99 div 2,
    {[Sum, Sum, Sum], IterNs, null, WarmupResults, WarmupNs, null} = bench:run(Config, Collect),
    Passes = length(WarmupResults) + 3,
    Passes = count_collected(Self, 0) + 1,
    true = lists:all(fun(Ns) -> Ns < 200000000 end, IterNs ++ WarmupNs),
    %% none: no collection at all.
    {[Sum], [_], null, [], [], null} = bench:run(Config#{iterations := 1, warmup_ms := 0}, none),
    0 = count_collected(Self, 0).

count_collected(Pid, Count) ->
    receive {collected, Pid} -> count_collected(Pid, Count + 1) after 0 -> Count end.

json_line_test() ->
    Config = #{workload => "chain", n => 2, buffer => null},
    Line = lists:flatten(bench:report(Config, {[2, 2], [10, 20], null, [2, 2, 2], [7, 8, 9], 2})),
    true = string:find(Line, "\"iter_ns\": [10, 20], \"warmup_ns\": [7, 8, 9], "
                             "\"warmup_results\": [2, 2, 2], \"primed\": 2, ") =/= nomatch,
    Empty = lists:flatten(bench:report(Config, {[2], [10], null, [], [], null})),
    true = string:find(Empty, "\"warmup_ns\": [], \"warmup_results\": [], \"runtime") =/= nomatch,
    nomatch = string:find(Empty, "primed").

sleep_test() ->
    T0 = erlang:monotonic_time(millisecond),
    %% 500 ms: starting 1000 processes takes about a millisecond, with room for a busy CI machine
    {Done, SpawnNs} = bench:sleep(1000, 500),
    1000 = Done,
    true = SpawnNs < 500000000,
    true = erlang:monotonic_time(millisecond) - T0 >= 500.

chain_test() ->
    1 = bench:chain(1),
    10000 = bench:chain(10000).

bounded_test_() ->
    [fun() -> Sum = bench:bounded(N, B) end
     || N <- [1, 2, 1000], B <- [0, 1, 100], Sum <- [N * (N - 1) div 2]].

skynet_test_() ->
    [fun() -> Sum = bench:skynet(N) end || N <- [1, 10, 100, 10000], Sum <- [N * (N - 1) div 2]].

%% No process is left behind by any workload.
no_leftover_processes_test() ->
    Before = erlang:system_info(process_count),
    bench:chain(100),
    bench:bounded(100, 0),
    bench:skynet(100),
    timer:sleep(50),
    Before = erlang:system_info(process_count).
