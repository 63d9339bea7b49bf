defmodule Bench.CLI do
  @moduledoc """
  The program of docs/protocol.md: parses `WORKLOAD --n N --iterations K
  [--buffer B] [--duration-ms D] [--warmup-ms W]`, runs `Bench`'s workload
  for the warm-up, then K times, and prints one JSON line. bin/bench starts
  it on the Erlang VM with `-s Elixir.Bench.CLI main -extra ARGS`.
  """

  @usage """
  usage: bench WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]

    WORKLOAD         sleep, chain, bounded or skynet (docs/protocol.md)
    --n N            number of tasks (> 0; skynet: a power of ten)
    --iterations K   in-process iterations, the first one cold (> 0)
    --buffer B       channel capacity, required by bounded (>= 0; 0 = rendezvous)
    --duration-ms D  how long each task sleeps, required by sleep (> 0)
    --warmup-ms W    run the workload untimed until W ms have passed (at most 10000 runs) before the timed iterations (default 0)
  """

  # What each workload requires besides --n and --iterations.
  @needs %{"sleep" => ["duration-ms"], "chain" => [], "bounded" => ["buffer"], "skynet" => []}
  @minimum %{"n" => 1, "iterations" => 1, "buffer" => 0, "duration-ms" => 1, "warmup-ms" => 0}
  @int64_max 9_223_372_036_854_775_807
  # The warm-up stops after this many runs even if they total less than W ms
  # (docs/protocol.md): with N = 10 a run takes microseconds, and W ms of them
  # would make the JSON line huge.
  @max_warmup_runs 10_000
  # docs/protocol.md's priming: chain runs one untimed chain of
  # min(N, @prime_links) links before the warm-up and the first timed pass.
  @prime_links 1000

  @doc "Entry point: the exit status is always the one set here, never a stack trace."
  def main do
    status =
      try do
        cli(Enum.map(:init.get_plain_arguments(), &List.to_string/1))
      catch
        kind, reason ->
          IO.puts(
            :stderr,
            "bench: " <> String.replace(Exception.format_banner(kind, reason), "\n", " ")
          )

          1
      end

    :erlang.halt(status)
  end

  @doc "The protocol around `parse/1`: prints and returns the exit status."
  def cli(args) do
    case parse(args) do
      :help ->
        IO.write(@usage)
        0

      {:error, message} ->
        IO.puts(:stderr, "bench: " <> message)
        2

      {:ok, config} ->
        case run(config) do
          {:error, message} ->
            IO.puts(:stderr, "bench: error: " <> message)
            1

          runs ->
            IO.puts(report(config, runs))
            0
        end
    end
  end

  @doc "`:help`, `{:ok, config}` or `{:error, one_line}`."
  def parse(args) do
    cond do
      Enum.any?(args, &(&1 in ["--help", "-h", "-help"])) ->
        :help

      args == [] ->
        {:error, "missing WORKLOAD (sleep, chain, bounded or skynet); --help for usage"}

      true ->
        parse_workload(args)
    end
  end

  defp parse_workload([workload | options]) do
    with {:ok, needed} <- fetch_needs(workload),
         {:ok, opts} <- parse_options(options, %{}),
         :ok <- require_options(workload, ["n", "iterations" | needed], opts),
         :ok <- check_skynet(workload, opts["n"]) do
      {:ok,
       %{
         workload: workload,
         n: opts["n"],
         iterations: opts["iterations"],
         buffer: opts["buffer"],
         duration_ms: opts["duration-ms"],
         warmup_ms: Map.get(opts, "warmup-ms", 0)
       }}
    end
  end

  defp fetch_needs(workload) do
    case Map.fetch(@needs, workload) do
      {:ok, needed} ->
        {:ok, needed}

      :error ->
        {:error, "unknown workload #{inspect(workload)} (want sleep, chain, bounded or skynet)"}
    end
  end

  defp parse_options([], opts), do: {:ok, opts}

  defp parse_options(["--" <> name = flag | rest], opts) do
    case {Map.fetch(@minimum, name), rest} do
      {:error, _} ->
        {:error, "unknown option #{inspect(flag)}"}

      {_, []} ->
        {:error, "#{flag} needs a value"}

      {{:ok, min}, [value | rest]} ->
        case integer(value, min) do
          {:ok, v} -> parse_options(rest, Map.put(opts, name, v))
          {:error, why} -> {:error, "#{flag} #{inspect(value)}: #{why}"}
        end
    end
  end

  defp parse_options([other | _], _opts), do: {:error, "unexpected argument #{inspect(other)}"}

  # A base-10 integer (an optional sign, then digits only) that fits in 64 bits.
  defp integer(s, min) do
    case Integer.parse(s) do
      {v, ""} when v > @int64_max or v < -@int64_max - 1 -> {:error, "out of range"}
      {v, ""} when v < min -> {:error, "must be >= #{min}"}
      {v, ""} -> {:ok, v}
      _ -> {:error, "not an integer"}
    end
  end

  defp require_options(workload, names, opts) do
    case Enum.find(names, &(not Map.has_key?(opts, &1))) do
      nil -> :ok
      missing -> {:error, "#{workload} needs --#{missing}"}
    end
  end

  defp check_skynet("skynet", n) do
    if power_of_ten?(n), do: :ok, else: {:error, "skynet needs --n a power of ten, not #{n}"}
  end

  defp check_skynet(_workload, _n), do: :ok

  defp power_of_ten?(1), do: true
  defp power_of_ten?(n) when rem(n, 10) == 0, do: power_of_ten?(div(n, 10))
  defp power_of_ten?(_n), do: false

  @doc """
  The collection between passes (docs/protocol.md): before each pass (warm-up
  runs too) that follows the priming or another pass, outside the clock, a
  full collection of the process that runs the passes, so that no pass
  collects the previous one's garbage inside its clock (every task's process
  has ended with its pass, its heap freed; what a pass leaves is in this
  process's heap). `:erlang.garbage_collect/0`, or `:none` when
  `BENCH_COLLECT` is exactly `"0"`.
  """
  def collector do
    case System.get_env("BENCH_COLLECT") do
      "0" -> :none
      _ -> &:erlang.garbage_collect/0
    end
  end

  @doc """
  Runs the priming, the warm-up, then the K iterations:
  `{results, iter_ns, spawn_ns or nil, warmup_results, warmup_ns, primed or nil}`,
  or `{:error, one_line}` when the priming's answer is wrong. `collect` is
  `collector/0`'s answer (or the tests' stand-in), called before each pass
  but a fresh process's first.
  """
  def run(%{iterations: k} = config, collect \\ collector()) do
    # The workloads' code is loaded with the program, before the clock.
    {:module, Bench} = :code.ensure_loaded(Bench)

    with {:ok, primed} <- prime(config) do
      {warmup_results, warmup_ns} = warmup(config, @max_warmup_runs, collect, primed != nil)
      ran = primed != nil or warmup_results != []

      {results, iter_ns, spawn_ns} =
        Enum.reduce(1..k, {[], [], nil}, fn i, {results, iter_ns, spawn_ns} ->
          {result, spawn, ns} = timed(config, collect, ran or i > 1)
          {[result | results], [ns | iter_ns], spawn_ns || spawn}
        end)

      {Enum.reverse(results), Enum.reverse(iter_ns), spawn_ns, warmup_results, warmup_ns, primed}
    end
  end

  @doc """
  The priming (docs/protocol.md): for chain, one run of the same code on
  P = min(N, #{@prime_links}) links, untimed, its answer checked. Returns
  `{:ok, p}`, `{:ok, nil}` for the other workloads, or `{:error, one_line}`.
  """
  def prime(%{workload: "chain", n: n} = config) do
    p = min(n, @prime_links)

    case iteration(%{config | n: p}, nil) do
      {^p, _} -> {:ok, p}
      {answer, _} -> {:error, "the priming chain of #{p} links answered #{answer}, not #{p}"}
    end
  end

  def prime(_config), do: {:ok, nil}

  @doc """
  The warm-up: another run while the runs so far total less than W ms and
  number fewer than `max_runs` (docs/protocol.md; `run/2` passes
  #{@max_warmup_runs}): W = 0 runs none, W > 0 at least one, each after
  `collect` as in `run/2`; `ran` says whether the priming ran before.
  Returns `{warmup_results, warmup_ns}`.
  """
  def warmup(%{warmup_ms: w} = config, max_runs, collect \\ collector(), ran \\ false),
    do: warmup(config, collect, ran, w * 1_000_000, max_runs, 0, [], [])

  defp warmup(config, collect, ran, budget_ns, runs_left, total_ns, results, times)
       when total_ns < budget_ns and runs_left > 0 do
    {result, _spawn, ns} = timed(config, collect, ran)
    results = [result | results]
    times = [ns | times]
    warmup(config, collect, true, budget_ns, runs_left - 1, total_ns + ns, results, times)
  end

  defp warmup(_config, _collect, _ran, _budget_ns, _runs_left, _total_ns, results, times),
    do: {Enum.reverse(results), Enum.reverse(times)}

  # One run of the workload on the iterations' clock: `{result, spawn_ns or nil, ns}`.
  # The collection comes first, before the clock, when something ran before in
  # this process (the priming or a pass): nothing of ours to collect before
  # the first pass of a fresh process, and a full collection there only adds
  # the collector's own structures to the peak RSS (Java's G1: sleep N = 1,
  # 44 -> 51 MiB).
  defp timed(config, collect, ran) do
    if ran and collect != :none, do: collect.()
    t0 = :erlang.monotonic_time(:nanosecond)
    {result, spawn} = iteration(config, t0)
    {result, spawn, :erlang.monotonic_time(:nanosecond) - t0}
  end

  defp iteration(%{workload: "sleep", n: n, duration_ms: d}, t0), do: Bench.sleep(n, d, t0)
  defp iteration(%{workload: "chain", n: n}, _t0), do: {Bench.chain(n), nil}
  defp iteration(%{workload: "bounded", n: n, buffer: b}, _t0), do: {Bench.bounded(n, b), nil}
  defp iteration(%{workload: "skynet", n: n}, _t0), do: {Bench.skynet(n), nil}

  @doc "The protocol's JSON line (hand-written: no dependencies)."
  def report(
        %{workload: w, n: n, buffer: b},
        {results, iter_ns, spawn_ns, warmup_results, warmup_ns, primed}
      ) do
    spawn = if spawn_ns, do: ~s(, "spawn_ns": #{spawn_ns}), else: ""
    primed = if primed, do: ~s(, "primed": #{primed}), else: ""

    ~s({"workload": "#{w}", "n": #{n}, "buffer": #{if b, do: b, else: "null"}, ) <>
      ~s("result": #{List.last(results)}, "results": #{ints(results)}, ) <>
      ~s("iter_ns": #{ints(iter_ns)}#{spawn}, ) <>
      ~s("warmup_ns": #{ints(warmup_ns)}, "warmup_results": #{ints(warmup_results)}#{primed}, ) <>
      ~s("runtime": "#{runtime()}"})
  end

  defp ints(list), do: "[" <> Enum.map_join(list, ", ", &Integer.to_string/1) <> "]"

  # "Elixir 1.14.0 (Erlang/OTP 25.2.3, erts-13.1.5)"
  defp runtime do
    release = List.to_string(:erlang.system_info(:otp_release))
    file = Path.join([List.to_string(:code.root_dir()), "releases", release, "OTP_VERSION"])

    otp =
      case File.read(file) do
        {:ok, v} -> String.trim(v)
        {:error, _} -> release
      end

    "Elixir #{System.version()} (Erlang/OTP #{otp}, erts-#{:erlang.system_info(:version)})"
  end
end
