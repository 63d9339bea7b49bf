// The thread-per-task baseline (Vaughan): one OS thread per task, default stack size.
using System.Diagnostics;
using System.Threading;

namespace Bench
{
    static class ThreadWorkloads
    {
        public static Measurement Sleep(int n, int durationMs)
        {
            var threads = new Thread[n];
            long completed = 0;
            ThreadStart sleeper = () =>
            {
                Thread.Sleep(durationMs);
                Interlocked.Increment(ref completed);
            };

            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < n; i++)
            {
                threads[i] = new Thread(sleeper);
                threads[i].Start();
            }
            long spawnNs = Measurement.NsSince(start);
            foreach (Thread t in threads)
                t.Join();
            return new Measurement(Interlocked.Read(ref completed), Measurement.NsSince(start), spawnNs);
        }
    }
}
