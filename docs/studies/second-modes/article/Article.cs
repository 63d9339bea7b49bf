// Yakunin 2017's C# tests ("Go vs C#, part 1"), rebuilt from the article's
// description to run beside csharp-async in the second-modes study (README.md
// there). chain: each relay an `async void` method started as its channel is made,
// the message sent into the channel made last and read from the first, no join.
// chain-await: `AddOne(Task<int>)` awaits its input, then `Task.Yield()`, and
// returns x + 1; N + 1 of them chained onto a TaskCompletionSource completed with
// -1, so the last answers N. `Measure` runs a test once for one message, then
// `GC.Collect()` and a Stopwatch around each timed pass. Three changes: Channel.CreateBounded<int>(1)
// for the preview library's unbuffered channel (.NET has none now); the warm-up
// test with min(N, 1000) messages, the protocol's priming, which the harness checks
// (the article's one message gave the same warm pass: csharp/README.md); and the
// protocol's arguments and JSON line, so the harness can run it:
//     Article.dll chain|chain-await --n N --iterations K
using System;
using System.Diagnostics;
using System.Text;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace Article
{
    static class Program
    {
        static async void AddOne(ChannelWriter<int> output, ChannelReader<int> input)
        {
            await output.WriteAsync(1 + await input.ReadAsync());
        }

        static int Test(int count)
        {
            var firstChannel = Channel.CreateBounded<int>(1);
            var output = firstChannel;
            for (var i = 0; i < count; i++)
            {
                var input = Channel.CreateBounded<int>(1);
                AddOne(output.Writer, input.Reader);
                output = input;
            }
            output.Writer.WriteAsync(0);
            return firstChannel.Reader.ReadAsync().AsTask().Result;
        }

        static async Task<int> AddOne(Task<int> input)
        {
            var result = 1 + await input;
            await Task.Yield();
            return result;
        }

        static int TestTasks(int count)
        {
            var tcs = new TaskCompletionSource<int>();
            var output = AddOne(tcs.Task);
            for (var i = 0; i < count; i++)
                output = AddOne(output);
            tcs.SetResult(-1);
            return output.Result;
        }

        static int Main(string[] args)
        {
            int n, k;
            if (args.Length != 5 || (args[0] != "chain" && args[0] != "chain-await") || args[1] != "--n" || args[3] != "--iterations" ||
                !int.TryParse(args[2], out n) || !int.TryParse(args[4], out k) || n < 1 || k < 1)
            {
                Console.Error.WriteLine("usage: Article.dll chain|chain-await --n N --iterations K (N, K > 0)");
                return 2;
            }
            Func<int, int> test = args[0] == "chain" ? (Func<int, int>)Test : TestTasks;
            int primed = Math.Min(n, 1000);
            test(primed);  // the article's warm-up, at the protocol's size
            var results = new long[k];
            var ns = new long[k];
            for (int i = 0; i < k; i++)
            {
                GC.Collect();
                var sw = Stopwatch.StartNew();
                results[i] = test(n);
                sw.Stop();
                ns[i] = (long)(sw.ElapsedTicks * (1e9 / Stopwatch.Frequency));
            }
            var line = new StringBuilder();
            line.Append("{\"workload\": \"").Append(args[0]).Append("\", \"n\": ").Append(n).Append(", \"buffer\": null, \"result\": ")
                .Append(results[k - 1]).Append(", \"results\": [").Append(string.Join(", ", results))
                .Append("], \"iter_ns\": [").Append(string.Join(", ", ns))
                .Append("], \"warmup_ns\": [], \"warmup_results\": [], \"primed\": ").Append(primed).Append(", \"runtime\": \".NET ")
                .Append(Environment.Version).Append(" (article)\"}");
            Console.WriteLine(line.ToString());
            return 0;
        }
    }
}
