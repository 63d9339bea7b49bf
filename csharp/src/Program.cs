// Command-line front end of the C# benchmark programs (docs/protocol.md):
// parses the arguments, runs one workload K times and prints one JSON line.
//
// Written in the C# subset that both Roslyn and Mono's mcs 6.8 accept (see README.md).
using System;
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

            var results = new long[options.Iterations];
            var iterNs = new long[options.Iterations];
            long spawnNs = 0;
            for (int i = 0; i < options.Iterations; i++)
            {
                Measurement m = workload(options);
                results[i] = m.Result;
                iterNs[i] = m.ElapsedNs;
                if (i == 0)
                    spawnNs = m.SpawnNs;
            }
            Console.WriteLine(Report(options, results, iterNs, spawnNs));
            return 0;
        }

        static Func<Options, Measurement> Lookup(string model, string workload)
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
                case "threads sleep":
                    return o => ThreadWorkloads.Sleep(o.N, o.DurationMs);
            }
            if (model != "async" && model != "threads")
                throw new UsageException("unknown model '" + model + "' (want async or threads)");
            throw new UsageException("workload '" + workload + "' is not implemented by the " + model + " model");
        }

        // .NET channels have no rendezvous mode: B = 0 runs with capacity 1.
        static int Capacity(int buffer)
        {
            return Math.Max(buffer, 1);
        }

        static string Report(Options o, long[] results, long[] iterNs, long spawnNs)
        {
            var json = new StringBuilder();
            json.Append("{\"workload\": ").Append(Quote(o.Workload));
            json.Append(", \"n\": ").Append(o.N);
            json.Append(", \"buffer\": ").Append(o.Workload == "bounded" ? o.Buffer.ToString(CultureInfo.InvariantCulture) : "null");
            json.Append(", \"result\": ").Append(results[results.Length - 1]);
            json.Append(", \"results\": [").Append(string.Join(", ", results)).Append(']');
            json.Append(", \"iter_ns\": [").Append(string.Join(", ", iterNs)).Append(']');
            if (o.Workload == "sleep")
                json.Append(", \"spawn_ns\": ").Append(spawnNs);
            if (o.Workload == "bounded" && Capacity(o.Buffer) != o.Buffer)
                json.Append(", \"capacity\": ").Append(Capacity(o.Buffer));
            json.Append(", \"runtime\": ").Append(Quote(".NET " + Environment.Version + " (" + Compiler() + ")"));
            return json.Append('}').ToString();
        }

        static string Quote(string s)
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
        public int Buffer = 1;
        public int DurationMs = 10000;
        public int Iterations;

        const string Usage =
            "usage: Bench.dll async|threads WORKLOAD --n N [--buffer B] [--duration-ms D] [--iterations K]";

        public static Options Parse(string[] args)
        {
            if (args.Length < 2)
                throw new UsageException(Usage);
            var o = new Options { Model = args[0], Workload = args[1] };
            switch (o.Workload)
            {
                case "sleep": o.Iterations = 1; break;
                case "chain": o.Iterations = 2; break;
                case "chain-await": o.Iterations = 2; break;
                case "bounded": o.Iterations = 10; break;
                default: throw new UsageException("unknown workload '" + o.Workload + "' (want sleep, chain, chain-await or bounded)");
            }
            for (int i = 2; i < args.Length; i += 2)
            {
                string name = args[i];
                if (name != "--n" && name != "--buffer" && name != "--duration-ms" && name != "--iterations")
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
                }
            }
            if (o.N == 0)
                throw new UsageException("--n is required");
            return o;
        }

        static int Int(string name, string value, int min)
        {
            int v;
            // NumberStyles.None: digits only, so "+5", " 5" and "-1" are rejected too.
            if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out v) || v < min)
                throw new UsageException(name + " must be an integer >= " + min + ", got '" + value + "'");
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
