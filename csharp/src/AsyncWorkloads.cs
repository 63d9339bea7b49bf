// The protocol's workloads on .NET tasks: async methods called directly (no
// Task.Run), scheduled by the default thread pool.
using System.Diagnostics;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace Bench
{
    static class AsyncWorkloads
    {
        // 1M tasks 2024: N Task.Delay timers joined by Task.WhenAll.
        public static Measurement Sleep(int n, int durationMs)
        {
            var tasks = new Task[n];
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < n; i++)
                tasks[i] = Task.Delay(durationMs);
            long spawnNs = Measurement.NsSince(start);
            Task.WhenAll(tasks).GetAwaiter().GetResult();
            long elapsedNs = Measurement.NsSince(start);

            // The result is the join's: count the tasks that ran to completion.
            long completed = 0;
            foreach (Task t in tasks)
                if (t.Status == TaskStatus.RanToCompletion)
                    completed++;
            return new Measurement(completed, elapsedNs, spawnNs);
        }

        // Yakunin 2017: N relays linked by N+1 channels. Bounded channels of
        // capacity 1 stand in for Go's unbuffered ones (.NET has no rendezvous channel).
        // As the article (and Go's program) writes it: each channel is made as its relay
        // starts, and the pass holds only the first channel and the last reader; no
        // array of channels or relays and no join of the relays (each has finished its
        // write by the time the last channel holds the answer). Arrays of all N+1
        // channels and N tasks joined by Task.WhenAll measured 1.08x slower and had a
        // second mode at 2 GiB: see README.md, "The chain as the article writes it".
        public static async Task<long> Chain(int n)
        {
            var first = Channel.CreateBounded<long>(1);
            ChannelReader<long> last = StartRelays(first.Reader, n);
            await first.Writer.WriteAsync(0);
            return await last.ReadAsync();
        }

        // Starts n relays, each reading input and writing a channel made for it, and
        // returns the last one's reader. Not an async method: the relays' tasks are
        // not awaited, and a relay that waits is kept alive by its input channel.
        static ChannelReader<long> StartRelays(ChannelReader<long> input, int n)
        {
            for (int i = 0; i < n; i++)
            {
                var output = Channel.CreateBounded<long>(1);
                // Not awaited, on purpose (C# 7's `_ =`; mcs warns here where Roslyn does not).
#pragma warning disable 4014
                Relay(input, output.Writer);
#pragma warning restore 4014
                input = output.Reader;
            }
            return input;
        }

        static async Task Relay(ChannelReader<long> input, ChannelWriter<long> output)
        {
            long x = await input.ReadAsync();
            await output.WriteAsync(x + 1);
        }

        // Yakunin 2017's task-based variant: each task awaits its predecessor and adds 1.
        // Not an async method itself, as in the article: it returns the last link's task,
        // which the caller waits for, rather than awaiting it in one more state machine.
        public static Task<long> ChainAwait(int n)
        {
            var source = new TaskCompletionSource<long>();
            Task<long> last = source.Task;
            for (int i = 0; i < n; i++)
                last = AddOne(last);

            source.SetResult(0);
            return last;
        }

        static async Task<long> AddOne(Task<long> previous)
        {
            long x = await previous;
            // As in Yakunin 2017 (and the protocol): a completing task runs its awaiter's
            // continuation inline, so the yield keeps each step one frame deep. Without
            // it .NET Core still survives (inlining falls back to the thread pool when
            // the stack runs low), but more slowly: see README.md.
            await Task.Yield();
            return x + 1;
        }

        // Go/Rust channels: N producers, one channel of the given capacity, one consumer. As the
        // protocol says, the consumer is a thread-pool task like the producers, started
        // before them: called directly, like them (no Task.Run), its first ReadAsync finds
        // the channel empty and suspends, so every read runs on the pool (a probe counted
        // 10000 of 10000). Consuming in this method instead ran every read on the main
        // thread, after all N producers were started: see README.md.
        public static async Task<long> Bounded(int n, int capacity)
        {
            var channel = Channel.CreateBounded<long>(capacity);
            Task<long> consumer = Consume(channel.Reader, n);
            var producers = new Task[n];
            for (int i = 0; i < n; i++)
                producers[i] = Produce(channel.Writer, i);

            long sum = await consumer;
            await Task.WhenAll(producers);
            return sum;
        }

        static async Task<long> Consume(ChannelReader<long> reader, int n)
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
                sum += await reader.ReadAsync();
            return sum;
        }

        static async Task Produce(ChannelWriter<long> writer, long value)
        {
            await writer.WriteAsync(value);
        }

        // The skynet benchmark: a tree of tasks over leaves 0..n-1 (n a power of ten), each
        // node of size > 1 starting 10 children and summing their results; the root is a
        // task like every node, and Main blocks on it.
        //
        // Every child is started with Task.Run, which is what makes it a task scheduled on the
        // pool. Calling the async method directly (as the other workloads do) would not: an
        // async method runs synchronously until its first await of something unfinished, and
        // a leaf never awaits, so the whole tree would run as a plain depth-first recursion on
        // the caller's thread, every Task already complete when returned. `await Task.Yield()`
        // at the top of Node would schedule each node too, but Yield queues to the pool's
        // global FIFO queue, so the tree unfolds breadth-first with most of its 1.1M nodes
        // alive at once (N = 1M: 320-390 MB peak RSS and slower, against 111 MB here, see
        // README.md); Task.Run from a pool thread goes to that thread's local queue, which it
        // runs newest first (depth-first) while idle workers steal the oldest.
        public static Task<long> Skynet(int n)
        {
            return Task.Run(() => Node(0, n));
        }

        static async Task<long> Node(long num, long size)
        {
            if (size == 1)
                return num;
            long step = size / 10;
            var children = new Task<long>[10];
            for (int k = 0; k < 10; k++)
            {
                long childNum = num + k * step;
                children[k] = Task.Run(() => Node(childNum, step));
            }
            long sum = 0;
            foreach (long r in await Task.WhenAll(children))
                sum += r;
            return sum;
        }
    }
}
