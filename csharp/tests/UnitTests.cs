// In-process tests of Program.Run's pass loop: docs/protocol.md, "Collection between
// passes". toolchain.sh test compiles them with src/*.cs into obj/unit/BenchTests.dll
// (entry point Bench.UnitTests.Main) and runs it before test_bench.py, which tests
// the built program from outside. Stand-in workloads and collectors log what runs.
//
// Written in the C# subset that both Roslyn and Mono's mcs 6.8 accept (see README.md).
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Bench
{
    static class UnitTests
    {
        static int Main()
        {
            var tests = new Dictionary<string, Action>
            {
                { "CollectsBeforeEachPassAfterSomethingRan", CollectsBeforeEachPassAfterSomethingRan },
                { "FreshProcessFirstPassIsNotCollected", FreshProcessFirstPassIsNotCollected },
                { "CollectionIsOutsideTheClock", CollectionIsOutsideTheClock },
                { "CollectionIsOutsideTheRealWorkloadsClocks", CollectionIsOutsideTheRealWorkloadsClocks },
                { "BenchCollectZeroSkipsTheCollection", BenchCollectZeroSkipsTheCollection },
                { "CollectorIsAFullCollection", CollectorIsAFullCollection },
                { "WrongPrimingStopsBeforeAnyCollection", WrongPrimingStopsBeforeAnyCollection },
            };
            int failed = 0;
            foreach (var test in tests)
            {
                try
                {
                    test.Value();
                    Console.WriteLine("ok   " + test.Key);
                }
                catch (Exception e)
                {
                    failed++;
                    Console.WriteLine("FAIL " + test.Key + ": " + e);
                }
            }
            Console.WriteLine((tests.Count - failed) + " passed, " + failed + " failed");
            return failed == 0 ? 0 : 1;
        }

        static Options Parse(string line)
        {
            return Options.Parse(line.Split(' '));
        }

        // A pass that logs "pass N" and claims msEach ms, so that --warmup-ms makes a known
        // number of warm-up runs.
        static Func<Options, Measurement> Logging(List<string> log, int msEach)
        {
            return o =>
            {
                log.Add("pass " + o.N);
                return new Measurement(o.N, msEach * 1000000L, 0);
            };
        }

        // The expected log: the priming's pass (if any), then each pass after a collection,
        // but the first when no priming ran before it.
        static List<string> Expected(int primed, int n, int passes)
        {
            var log = new List<string>();
            if (primed > 0)
                log.Add("pass " + primed);
            for (int i = 0; i < passes; i++)
            {
                if (primed > 0 || i > 0)
                    log.Add("collect");
                log.Add("pass " + n);
            }
            return log;
        }

        static void CollectsBeforeEachPassAfterSomethingRan()
        {
            // W = 5 ms of 2 ms runs: three warm-up runs, then K = 3; chains prime first.
            foreach (string line in new[] {
                "async chain --n 2000 --iterations 3 --warmup-ms 5",
                "async chain-await --n 5 --iterations 3 --warmup-ms 5",
                "async bounded --n 10 --buffer 1 --iterations 3 --warmup-ms 5",
                "threads sleep --n 10 --duration-ms 1 --iterations 3 --warmup-ms 5" })
            {
                Options o = Parse(line);
                var log = new List<string>();
                Program.Passes p = Program.Run(o, Logging(log, 2), () => log.Add("collect"));
                bool chains = o.Workload.StartsWith("chain", StringComparison.Ordinal);
                int primed = chains ? Math.Min(o.N, Program.MaxPrimeLinks) : 0;
                Equal(primed, p.Primed, line);
                Equal(3, p.WarmupNs.Count, line);
                Equal(3, p.IterNs.Length, line);
                Equal(Expected(primed, o.N, 6), log, line);
            }
            // No --warmup-ms: one collection a timed pass.
            var log0 = new List<string>();
            Program.Run(Parse("async chain --n 7 --iterations 2"), Logging(log0, 2), () => log0.Add("collect"));
            Equal(Expected(7, 7, 2), log0, "no warm-up");
        }

        static void FreshProcessFirstPassIsNotCollected()
        {
            // Nothing ran before the first pass: no collection there, one before each later pass.
            var log = new List<string>();
            Program.Run(Parse("async bounded --n 10 --buffer 1 --iterations 3"), Logging(log, 2),
                        () => log.Add("collect"));
            Equal(new List<string> { "pass 10", "collect", "pass 10", "collect", "pass 10" }, log,
                  "no priming, no warm-up");
            // W = 3 ms of 2 ms runs: two warm-up runs, the first without a collection.
            log = new List<string>();
            Program.Passes p = Program.Run(Parse("threads sleep --n 4 --duration-ms 1 --iterations 2 --warmup-ms 3"),
                                           Logging(log, 2), () => log.Add("collect"));
            Equal(2, p.WarmupNs.Count, "warm-up runs");
            Equal(new List<string> { "pass 4", "collect", "pass 4", "collect", "pass 4", "collect", "pass 4" }, log,
                  "warm-up, no priming");
            // The priming ran before the first pass: it is collected.
            log = new List<string>();
            Program.Run(Parse("async chain-await --n 3 --iterations 1"), Logging(log, 2), () => log.Add("collect"));
            Equal(new List<string> { "pass 3", "collect", "pass 3" }, log, "priming");
        }

        static void CollectionIsOutsideTheClock()
        {
            // A collection that takes 300 ms is in no figure; each pass (2 ms) is.
            const long stallNs = 300 * 1000000L;
            Options o = Parse("async chain --n 50 --iterations 2 --warmup-ms 1");
            var log = new List<string>();
            Func<Options, Measurement> workload = opts => Measurement.Time(() =>
            {
                log.Add("pass " + opts.N);
                Thread.Sleep(2);
                return Task.FromResult((long)opts.N);
            });
            Program.Passes p = Program.Run(o, workload, () => { log.Add("collect"); Thread.Sleep(300); });
            Equal(Expected(50, 50, 3), log, "one warm-up run, two timed passes");
            var all = new List<long>(p.WarmupNs);
            all.AddRange(p.IterNs);
            foreach (long ns in all)
                True(ns >= 2 * 1000000L && ns < stallNs, "a pass took " + ns + " ns");
            Equal(new List<long> { 50, 50 }, new List<long>(p.Results), "results");
        }

        static void CollectionIsOutsideTheRealWorkloadsClocks()
        {
            // The program's own workloads, whose clocks start inside them; sleep does not prime,
            // so its first pass has no collection.
            const long stallNs = 300 * 1000000L;
            foreach (string line in new[] {
                "async chain --n 100 --iterations 2",
                "async sleep --n 10 --duration-ms 1 --iterations 2",
                "threads sleep --n 10 --duration-ms 1 --iterations 2" })
            {
                Options o = Parse(line);
                int collections = 0;
                Program.Passes p = Program.Run(o, Program.Lookup(o.Model, o.Workload),
                                               () => { collections++; Thread.Sleep(300); });
                Equal(o.Workload == "chain" ? 2 : 1, collections, line);
                foreach (long ns in p.IterNs)
                    True(ns < stallNs, line + ": a pass took " + ns + " ns");
                Equal(new List<long> { o.N, o.N }, new List<long>(p.Results), line);
            }
        }

        static void BenchCollectZeroSkipsTheCollection()
        {
            True(Program.Collector("0") == null, "BENCH_COLLECT=0 collects");
            foreach (string value in new[] { null, "", "1", "00", " 0", "0 ", "false" })
                True(Program.Collector(value) != null, "BENCH_COLLECT=" + value + " does not collect");
            // Run with Collector("0")'s null: the passes alone.
            var log = new List<string>();
            Program.Passes p = Program.Run(Parse("async chain --n 5 --iterations 2 --warmup-ms 3"),
                                           Logging(log, 2), Program.Collector("0"));
            Equal(new List<string> { "pass 5", "pass 5", "pass 5", "pass 5", "pass 5" }, log, "no collection");
            Equal(2, p.WarmupNs.Count, "warm-up runs");
        }

        static void CollectorIsAFullCollection()
        {
            int before = GC.CollectionCount(GC.MaxGeneration);
            Program.Collector(null)();
            True(GC.CollectionCount(GC.MaxGeneration) > before, "no collection of generation " + GC.MaxGeneration);
        }

        static void WrongPrimingStopsBeforeAnyCollection()
        {
            var log = new List<string>();
            var stderr = new StringWriter();
            TextWriter saved = Console.Error;
            Console.SetError(stderr);
            Program.Passes p;
            try
            {
                p = Program.Run(Parse("async chain --n 20 --iterations 2"),
                                o => new Measurement(o.N - 1, 1, 0), () => log.Add("collect"));
            }
            finally
            {
                Console.SetError(saved);
            }
            True(p == null, "a wrong priming answer ran the passes");
            Equal(new List<string>(), log, "collections");
            True(stderr.ToString() == "priming chain of 20 links answered 19" + Environment.NewLine, stderr.ToString());
        }

        static void True(bool condition, string what)
        {
            if (!condition)
                throw new Exception(what);
        }

        static void Equal(int expected, int actual, string what)
        {
            if (expected != actual)
                throw new Exception(what + ": expected " + expected + ", got " + actual);
        }

        static void Equal<T>(List<T> expected, List<T> actual, string what)
        {
            string e = string.Join(", ", expected), a = string.Join(", ", actual);
            if (e != a)
                throw new Exception(what + ": expected [" + e + "], got [" + a + "]");
        }
    }
}
