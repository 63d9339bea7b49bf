// Command-line front end of the C# benchmark programs (docs/protocol.md):
// parses the arguments, runs one workload K times and prints one JSON line,
// or (`async serve`) runs the HTTP server of src/Server.cs.
//
// Written in the C# subset that both Roslyn and Mono's mcs 6.8 accept (see README.md).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;

namespace Bench
{
    static class Program
    {
        static int Main(string[] args)
        {
            if (args.Length == 1 && args[0] == "--version")
            {
                Console.WriteLine(Environment.Version + ", " + Compiler());
                return 0;
            }
            if (Array.IndexOf(args, "--help") >= 0 || Array.IndexOf(args, "-h") >= 0)
            {
                Console.WriteLine(Options.Usage);
                return 0;
            }
            if (args.Length >= 2 && args[0] == "async" && args[1] == "serve")
            {
                var serveArgs = new string[args.Length - 2];
                Array.Copy(args, 2, serveArgs, 0, serveArgs.Length);
                return Server.Run(serveArgs);
            }
            Options options;
            Func<Options, Measurement> workload;
            try
            {
                options = Options.Parse(args);
                workload = Lookup(options.Model, options.Workload);
            }
            catch (UsageException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }

            Passes passes = Run(options, workload, Collector(Environment.GetEnvironmentVariable("BENCH_COLLECT")));
            if (passes == null)
                return 1;
            Console.WriteLine(Report(options, passes));
            return 0;
        }

        // What Run measured, in run order: the JSON line's figures.
        internal sealed class Passes
        {
            public int Primed;  // 0: not a chain workload
            public readonly List<long> WarmupNs = new List<long>();
            public readonly List<long> WarmupResults = new List<long>();
            public long[] Results;
            public long[] IterNs;
            public long SpawnNs;  // the first timed pass's (sleep)
        }

        // The priming (chain, chain-await), the warm-up runs, then the K timed passes, each
        // pass but a fresh process's first after collect (null: none). Returns null, after
        // one line on stderr, when the priming's answer is wrong. Main passes Collector's;
        // the tests pass stand-ins.
        internal static Passes Run(Options options, Func<Options, Measurement> workload, Action collect)
        {
            var passes = new Passes();
            if (options.Workload == "chain" || options.Workload == "chain-await")
            {
                passes.Primed = Prime(options, workload);
                if (passes.Primed < 0)
                    return null;
            }

            bool ran = passes.Primed > 0;
            WarmUp(options, workload, collect, ref ran, MaxWarmupRuns, passes.WarmupNs, passes.WarmupResults);

            passes.Results = new long[options.Iterations];
            passes.IterNs = new long[options.Iterations];
            for (int i = 0; i < options.Iterations; i++)
            {
                Measurement m = Pass(options, workload, collect, ref ran);
                passes.Results[i] = m.Result;
                passes.IterNs[i] = m.ElapsedNs;
                if (i == 0)
                    passes.SpawnNs = m.SpawnNs;
            }
            return passes;
        }

        // docs/protocol.md, "Collection between passes": one full, blocking collection before
        // each pass (warm-up runs too) that follows the priming or another pass, so that no
        // pass collects the previous pass's garbage inside its clock; GC.Collect(), as the
        // article's program did before each timed run.
        // BENCH_COLLECT=0 (exactly) skips it: null.
        internal static Action Collector(string benchCollect)
        {
            if (benchCollect == "0")
                return null;
            return GC.Collect;
        }

        // One pass: the collection if something ran before it in this process (ran), then the
        // workload, whose clock starts inside it.
        static Measurement Pass(Options options, Func<Options, Measurement> workload, Action collect, ref bool ran)
        {
            // Nothing of ours to collect before the first pass of a fresh process; a full
            // collection there only adds the collector's own structures to the peak RSS
            // (G1: sleep N = 1, 44 -> 51 MiB).
            if (collect != null && ran)
                collect();
            ran = true;
            return workload(options);
        }

        // Priming (docs/protocol.md, chain and chain-await): one untimed chain of
        // P = min(N, 1000) links, built and run by the same code before the warm-up and the
        // first timed pass, so the JIT has compiled the relay's resumption before the cold
        // pass (Yakunin 2017's C# program ran its test once for one message for the same
        // reason). Its time is dropped; iter_ns[0] is still the first pass at size N.
        // Returns P, or -1 (after one line on stderr) when its answer is not P.
        internal const int MaxPrimeLinks = 1000;

        static int Prime(Options options, Func<Options, Measurement> workload)
        {
            Options small = options.WithN(Math.Min(options.N, MaxPrimeLinks));
            long answer = workload(small).Result;
            if (answer != small.N)
            {
                Console.Error.WriteLine("priming chain of " + small.N + " links answered " + answer);
                return -1;
            }
            return small.N;
        }

        // --warmup-ms stops after this many runs even short of W ms: at N = 10 a run
        // takes microseconds, and the JSON line lists every warm-up run.
        const int MaxWarmupRuns = 10000;

        // --warmup-ms: a JIT compiles a hot path only after it has run many times, so the
        // same workload runs first, timed alike, until these runs have taken W ms in all
        // or number maxRuns; each run's time and answer go into ns and results.
        static void WarmUp(Options options, Func<Options, Measurement> workload, Action collect, ref bool ran,
                           int maxRuns, List<long> ns, List<long> results)
        {
            long totalNs = 0;
            while (totalNs < options.WarmupMs * 1000000L && ns.Count < maxRuns)
            {
                Measurement m = Pass(options, workload, collect, ref ran);
                results.Add(m.Result);
                ns.Add(m.ElapsedNs);
                totalNs += m.ElapsedNs;
            }
        }

        internal static Func<Options, Measurement> Lookup(string model, string workload)
        {
            switch (model + " " + workload)
            {
                case "async sleep":
                    return o => AsyncWorkloads.Sleep(o.N, o.DurationMs);
                case "async chain":
                    return o => Measurement.Time(() => AsyncWorkloads.Chain(o.N));
                case "async chain-await":
                    return o => Measurement.Time(() => AsyncWorkloads.ChainAwait(o.N));
                case "async bounded":
                    return o => Measurement.Time(() => AsyncWorkloads.Bounded(o.N, Capacity(o.Buffer)));
                case "async skynet":
                    return o => Measurement.Time(() => AsyncWorkloads.Skynet(o.N));
                case "threads sleep":
                    return o => ThreadWorkloads.Sleep(o.N, o.DurationMs);
            }
            throw new InvalidOperationException("no workload " + model + " " + workload);  // Parse checked both
        }

        // .NET channels have no rendezvous mode: B = 0 runs with capacity 1.
        static int Capacity(int buffer)
        {
            return Math.Max(buffer, 1);
        }

        static string Report(Options o, Passes p)
        {
            long[] results = p.Results, iterNs = p.IterNs;
            List<long> warmupNs = p.WarmupNs, warmupResults = p.WarmupResults;
            long spawnNs = p.SpawnNs;
            int primed = p.Primed;
            var json = new StringBuilder();
            json.Append("{\"workload\": ").Append(Quote(o.Workload));
            json.Append(", \"n\": ").Append(o.N);
            json.Append(", \"buffer\": ").Append(o.Workload == "bounded" ? o.Buffer.ToString(CultureInfo.InvariantCulture) : "null");
            json.Append(", \"result\": ").Append(results[results.Length - 1]);
            json.Append(", \"results\": [").Append(string.Join(", ", results)).Append(']');
            json.Append(", \"iter_ns\": [").Append(string.Join(", ", iterNs)).Append(']');
            json.Append(", \"warmup_ns\": [").Append(string.Join(", ", warmupNs)).Append(']');
            json.Append(", \"warmup_results\": [").Append(string.Join(", ", warmupResults)).Append(']');
            if (o.Workload == "sleep")
                json.Append(", \"spawn_ns\": ").Append(spawnNs);
            if (primed > 0)
                json.Append(", \"primed\": ").Append(primed);
            if (o.Workload == "bounded" && Capacity(o.Buffer) != o.Buffer)
                json.Append(", \"capacity\": ").Append(Capacity(o.Buffer));
            json.Append(", \"runtime\": ").Append(Quote(RuntimeLabel()));
            return json.Append('}').ToString();
        }

        internal static string RuntimeLabel()
        {
            return ".NET " + Environment.Version + " (" + Compiler() + ")";
        }

        internal static string Quote(string s)
        {
            return "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
        }

        // The build records which compiler produced this assembly: Roslyn and mcs
        // emit different async state machines (structs vs classes), so it belongs
        // next to the runtime version.
        static string Compiler()
        {
            foreach (AssemblyMetadataAttribute a in typeof(Program).Assembly.GetCustomAttributes(typeof(AssemblyMetadataAttribute), false))
                if (a.Key == "Compiler")
                    return a.Value;
            return "unknown compiler";
        }
    }

    sealed class UsageException : Exception
    {
        public UsageException(string message) : base(message) { }
    }

    sealed class Options
    {
        public string Model;
        public string Workload;
        public int N;
        public int Buffer = -1;      // required by bounded
        public int DurationMs = -1;  // required by sleep
        public int Iterations = -1;
        public int WarmupMs;         // optional, 0: no warm-up run

        public const string Usage =
            "usage: Bench.dll async|threads WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]\n" +
            "       Bench.dll async serve --port P --delay-ms D [--threads T]\n" +
            "\n" +
            "  async|threads    the model: async (sleep, chain, chain-await, bounded, skynet) or threads (sleep)\n" +
            "  WORKLOAD         sleep, chain, chain-await, bounded or skynet (docs/protocol.md)\n" +
            "  --n N            number of tasks (> 0; skynet: the leaves, a power of ten)\n" +
            "  --iterations K   in-process iterations, the first one cold (> 0)\n" +
            "  --buffer B       channel capacity, required by bounded (>= 0; 0 runs with capacity 1)\n" +
            "  --duration-ms D  how long each task sleeps, required by sleep (> 0)\n" +
            "  --warmup-ms W    before the timed iterations, run the workload until the runs have taken W ms or number 10000 (>= 0, default 0)\n" +
            "\n" +
            "  serve            the HTTP server of docs/protocol.md on 127.0.0.1:P (P = 0: a free port);\n" +
            "                   the calls take 2*D and D ms (D > 0); --threads T sets the thread\n" +
            "                   pool's minimum worker threads (T > 0), the maximum stays the default";

        // The same request at another N (priming's small chain).
        public Options WithN(int n)
        {
            var o = (Options)MemberwiseClone();
            o.N = n;
            return o;
        }

        // Every error is a UsageException with a one-line message.
        public static Options Parse(string[] args)
        {
            if (args.Length < 1)
                throw new UsageException("missing the model (async or threads) and WORKLOAD; --help for usage");
            if (args.Length < 2)
                throw new UsageException("missing WORKLOAD (sleep, chain, chain-await, bounded or skynet); --help for usage");
            var o = new Options { Model = args[0], Workload = args[1] };
            string[] workloads;
            switch (o.Model)
            {
                // serve never reaches Parse (Main hands it to Server.Run); listed for the messages.
                case "async": workloads = new[] { "sleep", "chain", "chain-await", "bounded", "skynet", "serve" }; break;
                case "threads": workloads = new[] { "sleep" }; break;
                default: throw new UsageException("unknown model '" + o.Model + "' (want async or threads)");
            }
            if (Array.IndexOf(workloads, o.Workload) < 0)
                throw new UsageException("unknown workload '" + o.Workload + "' for the " + o.Model +
                                         " model (want " + string.Join(", ", workloads) + ")");
            for (int i = 2; i < args.Length; i += 2)
            {
                string name = args[i];
                if (name != "--n" && name != "--buffer" && name != "--duration-ms" && name != "--iterations" &&
                    name != "--warmup-ms")
                    throw new UsageException("unknown argument '" + name + "'");
                if (i + 1 == args.Length)
                    throw new UsageException(name + " needs a value");
                string value = args[i + 1];
                switch (name)
                {
                    case "--n": o.N = Int(name, value, 1); break;
                    case "--buffer": o.Buffer = Int(name, value, 0); break;
                    case "--duration-ms": o.DurationMs = Int(name, value, 1); break;
                    case "--iterations": o.Iterations = Int(name, value, 1); break;
                    case "--warmup-ms": o.WarmupMs = Int(name, value, 0); break;
                }
            }
            if (o.N == 0)
                throw new UsageException(o.Workload + " needs --n");
            if (o.Iterations < 0)
                throw new UsageException(o.Workload + " needs --iterations");
            if (o.Workload == "bounded" && o.Buffer < 0)
                throw new UsageException("bounded needs --buffer");
            if (o.Workload == "sleep" && o.DurationMs < 0)
                throw new UsageException("sleep needs --duration-ms");
            if (o.Workload == "skynet" && !PowerOfTen(o.N))
                throw new UsageException("skynet needs --n a power of ten (1, 10, 100, ...), got " + o.N);
            return o;
        }

        // 1, 10, 100, ...: skynet's tree has 10 children a node.
        internal static bool PowerOfTen(int n)
        {
            while (n > 0 && n % 10 == 0)
                n /= 10;
            return n == 1;
        }

        static int Int(string name, string value, int min)
        {
            return Int(name, value, min, int.MaxValue);
        }

        internal static int Int(string name, string value, int min, int max)
        {
            int v;
            // NumberStyles.None: digits only, so "+5", " 5" and "-1" are rejected too.
            if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out v) || v < min || v > max)
                throw new UsageException(name + " must be an integer " +
                    (max == int.MaxValue ? ">= " + min : "from " + min + " to " + max) + ", got '" + value + "'");
            return v;
        }
    }

    // One timed iteration: its answer, its wall time and (sleep only) how long the start loop took.
    struct Measurement
    {
        static readonly double NsPerTick = 1e9 / Stopwatch.Frequency;

        public readonly long Result;
        public readonly long ElapsedNs;
        public readonly long SpawnNs;

        public Measurement(long result, long elapsedNs, long spawnNs)
        {
            Result = result;
            ElapsedNs = elapsedNs;
            SpawnNs = spawnNs;
        }

        public static long NsSince(long startTimestamp)
        {
            return (long)((Stopwatch.GetTimestamp() - startTimestamp) * NsPerTick);
        }

        // Times the whole workload, from its first synchronous step (creating channels
        // and tasks on the calling thread) until its result is available.
        public static Measurement Time(Func<Task<long>> workload)
        {
            long start = Stopwatch.GetTimestamp();
            long result = workload().GetAwaiter().GetResult();
            return new Measurement(result, NsSince(start), 0);
        }
    }
}
