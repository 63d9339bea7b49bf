defmodule Bench do
  @moduledoc """
  The workloads of docs/protocol.md on bare Elixir processes: `spawn/1`,
  `send/2` and `receive`, no `Task` (a Task carries a monitor, a reference and
  its owner's bookkeeping: more memory per process, docs in README.md). Every
  channel is a process's mailbox.
  """

  @doc """
  `sleep`: `n` processes each wait `ms` milliseconds in `receive ... after`
  (the VM's timer wheel), then send `:done` to the parent, which counts them.
  Returns `{completed, spawn_ns}`; `t0` is the iteration's start.
  """
  def sleep(n, ms, t0 \\ :erlang.monotonic_time(:nanosecond)) do
    parent = self()

    sleeper = fn ->
      receive do
      after
        ms -> send(parent, :done)
      end
    end

    spawn_all(n, sleeper)
    spawn_ns = :erlang.monotonic_time(:nanosecond) - t0
    {count_done(n, 0), spawn_ns}
  end

  defp spawn_all(0, _fun), do: :ok

  defp spawn_all(n, fun) do
    spawn(fun)
    spawn_all(n - 1, fun)
  end

  defp count_done(0, count), do: count
  defp count_done(n, count), do: receive(do: (:done -> count_done(n - 1, count + 1)))

  @doc """
  `chain`: `n` relay processes; each receives `x` and sends `x + 1` to the
  next, the last to the parent. Built back to front (each relay is spawned
  knowing its successor); the parent sends 0 to the first.
  """
  def chain(n) do
    send(relays(n, self()), 0)
    receive do: (x -> x)
  end

  defp relays(0, next), do: next

  defp relays(n, next) do
    relays(n - 1, spawn(fn -> receive do: (x -> send(next, x + 1)) end))
  end

  @doc """
  `bounded`: one consumer process is the channel (README.md, "bounded"). A
  producer's send is a call: it sends `{self(), i}` and waits for the
  consumer's `:taken`, which the consumer sends as it receives the value. A
  send therefore completes only when its value is taken (B = 0's
  rendezvous), and no value is ever sent-but-not-taken, within every
  capacity B >= 1. The consumer is spawned before the producers; the parent
  waits for its sum.
  """
  def bounded(n, _buffer) do
    parent = self()
    consumer = spawn(fn -> send(parent, {:sum, consume(n, 0)}) end)
    produce(n - 1, consumer)
    receive do: ({:sum, sum} -> sum)
  end

  defp produce(-1, _consumer), do: :ok

  defp produce(i, consumer) do
    spawn(fn ->
      send(consumer, {self(), i})
      receive do: (:taken -> :ok)
    end)

    produce(i - 1, consumer)
  end

  defp consume(0, sum), do: sum

  defp consume(n, sum) do
    receive do
      {producer, v} ->
        send(producer, :taken)
        consume(n - 1, sum + v)
    end
  end

  @doc """
  `skynet`: a tree of processes; a node spawns its 10 children, sums the 10
  numbers they send back (its mailbox holds nothing else) and sends the sum
  to its parent.
  """
  def skynet(n) do
    parent = self()
    spawn(fn -> node(parent, 0, n) end)
    receive do: (sum -> sum)
  end

  defp node(parent, num, 1), do: send(parent, num)

  defp node(parent, num, size) do
    me = self()
    child = div(size, 10)
    spawn_children(me, num, child, 10)
    send(parent, sum_children(10, 0))
  end

  defp spawn_children(_me, _num, _child, 0), do: :ok

  defp spawn_children(me, num, child, k) do
    spawn(fn -> node(me, num, child) end)
    spawn_children(me, num + child, child, k - 1)
  end

  defp sum_children(0, sum), do: sum
  defp sum_children(k, sum), do: receive(do: (x -> sum_children(k - 1, sum + x)))
end
