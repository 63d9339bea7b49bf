defmodule BenchTest do
  # Each workload's answer at small sizes, and the argument parsing. The
  # harness's conformance test checks the built program (bin/bench) end to end.
  use ExUnit.Case, async: false

  alias Bench.CLI

  test "sleep: every process completes, after the sleep" do
    t0 = System.monotonic_time(:millisecond)
    # 500 ms: starting 1000 processes takes about a millisecond, with room for a busy CI machine
    {done, spawn_ns} = Bench.sleep(1000, 500)
    assert done == 1000
    assert spawn_ns < 500_000_000
    assert System.monotonic_time(:millisecond) - t0 >= 500
  end

  test "chain passes the value through every relay" do
    assert Bench.chain(1) == 1
    assert Bench.chain(10_000) == 10_000
  end

  test "bounded sums every producer's index, at every buffer" do
    for n <- [1, 2, 1000], b <- [0, 1, 100] do
      assert Bench.bounded(n, b) == div(n * (n - 1), 2)
    end
  end

  test "a bounded producer is released only when the consumer takes its value" do
    # The producer side of Bench.bounded/2, against a consumer that has not yet taken.
    me = self()

    producer =
      spawn(fn ->
        send(me, {self(), 7})
        receive do: (:taken -> :ok)
      end)

    assert_receive {^producer, 7}
    Process.sleep(20)
    assert Process.alive?(producer)
    ref = Process.monitor(producer)
    send(producer, :taken)
    assert_receive {:DOWN, ^ref, :process, ^producer, :normal}
  end

  test "skynet sums the leaves" do
    for n <- [1, 10, 100, 10_000], do: assert(Bench.skynet(n) == div(n * (n - 1), 2))
  end

  test "no process is left behind" do
    before = :erlang.system_info(:process_count)
    Bench.chain(100)
    Bench.bounded(100, 0)
    Bench.skynet(100)
    Process.sleep(50)
    assert :erlang.system_info(:process_count) <= before
  end

  test "good arguments" do
    assert {:ok, %{workload: "bounded", n: 10, iterations: 2, buffer: 0, duration_ms: nil}} =
             CLI.parse(~w(bounded --n 10 --iterations 2 --buffer 0))

    assert {:ok, %{warmup_ms: 0}} = CLI.parse(~w(chain --n 10 --iterations 2))
    assert {:ok, %{warmup_ms: 250}} = CLI.parse(~w(chain --warmup-ms 250 --n 10 --iterations 2))
    assert {:ok, %{warmup_ms: 0}} = CLI.parse(~w(skynet --n 10 --iterations 2 --warmup-ms 0))

    assert {:ok, %{workload: "sleep", duration_ms: 5}} =
             CLI.parse(~w(sleep --iterations 1 --n 3 --duration-ms 5))

    assert {:ok, %{n: 1_000_000}} = CLI.parse(~w(skynet --n 1000000 --iterations 1))
    assert CLI.parse(~w(chain --help)) == :help
    assert CLI.parse(~w(-h)) == :help
  end

  # docs/protocol.md's one table of bad input (docs/protocol-bad-input.json,
  # which test_conformance.py runs too), as docs/protocol-bad-input.tsv, its
  # line-per-case form for tests without a JSON reader (Elixir 1.14 has none):
  # the cases for the workloads we declare (impls.toml). "{w}" is a
  # workload's name, "{required}" its other required options (spliced).
  @declared ~w(sleep chain bounded skynet)

  defp bad_input_table do
    rows =
      Path.expand("../../docs/protocol-bad-input.tsv", __DIR__)
      |> File.read!()
      |> String.split("\n", trim: true)
      |> Enum.reject(&String.starts_with?(&1, "#"))
      |> Enum.map(&String.split(&1, "\t"))

    required = for ["required", w | args] <- rows, into: %{}, do: {w, args}

    table =
      for ["case", _name, case_when | args] <- rows,
          w <- bad_input_workloads(case_when, required) do
        Enum.flat_map(args, fn
          "{w}" -> [w]
          "{required}" -> Map.fetch!(required, w)
          arg -> [arg]
        end)
      end

    assert length(table) > 20
    table
  end

  defp bad_input_workloads("always", _), do: [nil]

  defp bad_input_workloads("declared", required),
    do: Enum.filter(Map.keys(required), &(&1 in @declared))

  defp bad_input_workloads("undeclared", required),
    do: Enum.reject(Map.keys(required), &(&1 in @declared))

  defp bad_input_workloads(w, _), do: if(w in @declared, do: [nil], else: [])

  test "bad arguments are one-line errors" do
    # The table, then ours.
    bad =
      bad_input_table() ++
        [
          ~w(chain --n 1.5 --iterations 1),
          ["chain", "--n", "", "--iterations", "1"],
          ["chain", "--n", " 1", "--iterations", "1"],
          ~w(chain --n 9223372036854775808 --iterations 1),
          ~w(chain --n 1 --iterations 1 extra),
          ~w(skynet --n 20 --iterations 1),
          ~w(skynet --n 11 --iterations 1),
          ["chain", "--n", "a\nb", "--iterations", "1"],
          ~w(chain --n 1 --iterations 1 --warmup-ms 1.5),
          ~w(chain --n 1 --iterations 1 --warmup-ms 9223372036854775808)
        ]

    for args <- bad do
      assert {:error, message} = CLI.parse(args), inspect(args)
      refute message =~ "\n", inspect(args)
    end
  end

  test "warm-up runs until their total reaches W ms, then the K iterations" do
    {:ok, config} = CLI.parse(~w(bounded --n 1000 --buffer 1 --iterations 3 --warmup-ms 100))
    sum = div(1000 * 999, 2)
    assert {[^sum, ^sum, ^sum], [_, _, _], nil, warmup_results, warmup_ns, nil} = CLI.run(config)
    assert warmup_ns != []
    assert length(warmup_results) == length(warmup_ns)
    assert Enum.all?(warmup_results, &(&1 == sum))
    # The last run crosses W, the ones before it do not.
    assert Enum.sum(warmup_ns) >= 100_000_000
    assert Enum.sum(warmup_ns) - List.last(warmup_ns) < 100_000_000
  end

  test "the run cap stops the warm-up long before W ms" do
    {:ok, config} = CLI.parse(~w(bounded --n 10 --buffer 1 --iterations 1 --warmup-ms 60000))
    t0 = System.monotonic_time(:millisecond)
    assert {[45, 45, 45], [_, _, _]} = CLI.warmup(config, 3)
    assert System.monotonic_time(:millisecond) - t0 < 5000
  end

  test "no warm-up run without --warmup-ms" do
    {:ok, config} = CLI.parse(~w(chain --n 10 --iterations 2))
    assert {[10, 10], [_, _], nil, [], [], 10} = CLI.run(config)
  end

  test "chain primes one chain of min(N, 1000) links, the K iterations unchanged" do
    for n <- [5, 2000] do
      {:ok, config} = CLI.parse(~w(chain --n #{n} --iterations 3))
      p = min(n, 1000)
      assert CLI.prime(config) == {:ok, p}
      assert {[^n, ^n, ^n], [_, _, _], nil, [], [], ^p} = CLI.run(config)
    end

    {:ok, config} = CLI.parse(~w(skynet --n 10 --iterations 1))
    assert CLI.prime(config) == {:ok, nil}
    assert {[45], [_], nil, [], [], nil} = CLI.run(config)
  end

  test "the priming runs first and outside the clock" do
    # A call trace of the process running CLI.run/1: Bench.chain(P) before
    # any timed/3 call, then one Bench.chain(N) inside each timed/3.
    for {n, w} <- [{5, 0}, {2000, 0}, {2000, 5}] do
      {:ok, config} = CLI.parse(~w(chain --n #{n} --iterations 2 --warmup-ms #{w}))
      me = self()

      runner =
        spawn(fn ->
          receive do: (:go -> send(me, {:ran, self(), CLI.run(config)}))
        end)

      # A pattern matches loaded code only: Bench may not be loaded yet.
      {:module, Bench} = Code.ensure_loaded(Bench)
      :erlang.trace_pattern({Bench, :chain, 1}, true, [:local])
      :erlang.trace_pattern({CLI, :timed, 3}, true, [:local])
      1 = :erlang.trace(runner, true, [:call])
      send(runner, :go)
      assert_receive {:ran, ^runner, runs}, 30_000
      ref = :erlang.trace_delivered(runner)
      assert_receive {:trace_delivered, ^runner, ^ref}
      :erlang.trace_pattern({Bench, :_, :_}, false, [:local])
      :erlang.trace_pattern({CLI, :_, :_}, false, [:local])
      p = min(n, 1000)
      assert {[^n, ^n], [_, _], nil, warmup_results, _, ^p} = runs
      timed = List.duplicate([:timed, n], length(warmup_results) + 2) |> List.flatten()
      assert trace_calls(runner, []) == [p | timed]
    end
  end

  defp trace_calls(pid, calls) do
    receive do
      {:trace, ^pid, :call, {Bench, :chain, [links]}} -> trace_calls(pid, [links | calls])
      {:trace, ^pid, :call, {CLI, :timed, [_, _, _]}} -> trace_calls(pid, [:timed | calls])
    after
      0 -> Enum.reverse(calls)
    end
  end

  # docs/protocol.md, "Collection between passes": one :erlang.garbage_collect()
  # of the process running the passes before each warm-up run and each timed
  # pass that follows the priming or another pass, before the clock; none
  # before the first pass when nothing ran before it; none under
  # BENCH_COLLECT=0.

  # Runs CLI.run(config) (collector/0's collection) in a process of its own
  # under BENCH_COLLECT = setting (nil: unset), with a call trace of
  # Bench.chain/1, Bench.bounded/2, timed/3 and :erlang.garbage_collect/0
  # there: {runs, calls}, calls in order (N for chain and bounded, :timed, :gc).
  defp traced_run(config, setting) do
    saved = System.get_env("BENCH_COLLECT")
    put_setting(setting)
    me = self()
    runner = spawn(fn -> receive do: (:go -> send(me, {:ran, self(), CLI.run(config)})) end)

    patterns = [
      {Bench, :chain, 1},
      {Bench, :bounded, 2},
      {CLI, :timed, 3},
      {:erlang, :garbage_collect, 0}
    ]

    try do
      # A pattern matches loaded code only: Bench may not be loaded yet.
      {:module, Bench} = Code.ensure_loaded(Bench)
      for mfa <- patterns, do: :erlang.trace_pattern(mfa, true, [:local])
      1 = :erlang.trace(runner, true, [:call])
      send(runner, :go)
      assert_receive {:ran, ^runner, runs}, 30_000
      ref = :erlang.trace_delivered(runner)
      assert_receive {:trace_delivered, ^runner, ^ref}
      {runs, collect_calls(runner, [])}
    after
      for mfa <- patterns, do: :erlang.trace_pattern(mfa, false, [:local])
      put_setting(saved)
    end
  end

  defp put_setting(nil), do: System.delete_env("BENCH_COLLECT")
  defp put_setting(value), do: System.put_env("BENCH_COLLECT", value)

  defp collect_calls(pid, calls) do
    receive do
      {:trace, ^pid, :call, {Bench, :chain, [n]}} -> collect_calls(pid, [n | calls])
      {:trace, ^pid, :call, {Bench, :bounded, [n, _]}} -> collect_calls(pid, [n | calls])
      {:trace, ^pid, :call, {CLI, :timed, [_, _, _]}} -> collect_calls(pid, [:timed | calls])
      {:trace, ^pid, :call, {:erlang, :garbage_collect, []}} -> collect_calls(pid, [:gc | calls])
    after
      0 -> Enum.reverse(calls)
    end
  end

  test "one collection before each warm-up run and timed pass but a fresh process's first" do
    for {workload, n, w} <- [
          {"chain", 5, 0},
          {"chain", 2000, 20},
          {"bounded", 100, 0},
          {"bounded", 100, 20},
          {"skynet", 10, 0},
          {"skynet", 10, 20}
        ] do
      {:ok, config} =
        CLI.parse(~w(#{workload} --n #{n} --iterations 3 --buffer 1 --warmup-ms #{w}))

      {runs, calls} = traced_run(config, nil)
      assert {[_, _, _], [_, _, _], nil, warmup_results, _, primed} = runs
      assert w == 0 or length(warmup_results) >= 2
      # skynet's own calls are not traced: its passes show as :timed, :gc.
      pass = if workload == "skynet", do: [:timed, :gc], else: [:timed, :gc, n]
      passes = List.flatten(List.duplicate(pass, length(warmup_results) + 3))
      # Without priming the first pass (warm-up run or iteration 1) is the
      # first thing the process runs: no collection before it.
      expected = if primed, do: [primed | passes], else: passes -- [:gc]
      assert calls == expected, "#{workload} N=#{n} W=#{w}"
    end
  end

  test "no priming and no warm-up: iteration 1 has no collection, iteration 2 has one" do
    {:ok, bounded} = CLI.parse(~w(bounded --n 100 --buffer 1 --iterations 2))
    assert {_, [:timed, 100, :timed, :gc, 100]} = traced_run(bounded, nil)
    # With priming, iteration 1 has one.
    {:ok, chain} = CLI.parse(~w(chain --n 5 --iterations 2))
    assert {_, [5, :timed, :gc, 5, :timed, :gc, 5]} = traced_run(chain, nil)
  end

  test "BENCH_COLLECT=0, exactly, skips the collection" do
    {:ok, config} = CLI.parse(~w(chain --n 2000 --iterations 3 --warmup-ms 5))
    {runs, calls} = traced_run(config, "0")
    assert {[2000, 2000, 2000], [_, _, _], nil, warmup_results, _, 1000} = runs
    assert warmup_results != []

    assert calls == [
             1000 | List.flatten(List.duplicate([:timed, 2000], length(warmup_results) + 3))
           ]

    # Any other value collects.
    for value <- ["", "1", "00", "false"] do
      {_, calls} = traced_run(%{config | warmup_ms: 0}, value)

      assert calls == [1000, :timed, :gc, 2000, :timed, :gc, 2000, :timed, :gc, 2000],
             inspect(value)
    end
  end

  test "collector/0 reads BENCH_COLLECT each time: :none for \"0\", else the BIF" do
    saved = System.get_env("BENCH_COLLECT")

    try do
      put_setting("0")
      assert CLI.collector() == :none
      put_setting(nil)
      assert CLI.collector() == (&:erlang.garbage_collect/0)
      put_setting("1")
      assert CLI.collector() == (&:erlang.garbage_collect/0)
    after
      put_setting(saved)
    end
  end

  test "the collection is outside the clock" do
    # A stand-in that takes 200 ms, passed to run/2: called once before each
    # pass but the first (bounded has no priming), and no pass took 200 ms.
    # Run here, in the test process: bounded's receive is selective, so the
    # stand-in's messages stay out of its way.
    {:ok, config} = CLI.parse(~w(bounded --n 100 --buffer 0 --iterations 3 --warmup-ms 1))
    me = self()

    collect = fn ->
      send(me, {:collected, self()})
      Process.sleep(200)
    end

    sum = div(100 * 99, 2)

    assert {[^sum, ^sum, ^sum], iter_ns, nil, warmup_results, warmup_ns, nil} =
             CLI.run(config, collect)

    assert count_collected(me, 0) == length(warmup_results) + 2
    assert Enum.all?(iter_ns ++ warmup_ns, &(&1 < 200_000_000)), inspect({iter_ns, warmup_ns})
    # :none: no collection at all.
    assert {[^sum], [_], nil, [], [], nil} =
             CLI.run(%{config | iterations: 1, warmup_ms: 0}, :none)

    assert count_collected(me, 0) == 0
  end

  defp count_collected(pid, count) do
    receive do
      {:collected, ^pid} -> count_collected(pid, count + 1)
    after
      0 -> count
    end
  end

  test "the JSON line" do
    config = %{workload: "sleep", n: 2, buffer: nil}
    line = CLI.report(config, {[2, 2], [10, 20], 5, [2, 2, 2], [7, 8, 9], nil})

    assert line =~
             ~s({"workload": "sleep", "n": 2, "buffer": null, "result": 2, "results": [2, 2], "iter_ns": [10, 20], "spawn_ns": 5, "warmup_ns": [7, 8, 9], "warmup_results": [2, 2, 2], "runtime": "Elixir )

    line = CLI.report(%{workload: "bounded", n: 2, buffer: 0}, {[1], [3], nil, [], [], nil})
    refute line =~ "spawn_ns"
    refute line =~ "primed"
    assert line =~ ~s("iter_ns": [3], "warmup_ns": [], "warmup_results": [], "runtime")

    line = CLI.report(%{workload: "chain", n: 2, buffer: nil}, {[2], [3], nil, [], [], 2})
    assert line =~ ~s("warmup_results": [], "primed": 2, "runtime")
  end

  # bin/bench is written by `toolchain.sh build`, which `toolchain.sh test` runs first.
  test "bin/bench gives the arguments before -- to the VM, the rest to the program" do
    bench = Path.expand("bin/bench")
    args = ["chain", "--n", "10", "--iterations", "1"]
    {out, 0} = System.cmd(bench, ["+S1:1", "+sbwtnone", "--" | args])
    assert out =~ ~s("result": 10,)
    {out, status} = System.cmd(bench, ["+Sbogus", "--" | args], stderr_to_stdout: true)
    assert status != 0 and out =~ "bad amount of schedulers bogus"
    {out, 0} = System.cmd(bench, args)
    assert out =~ ~s("result": 10,)
  end
end
