// The HTTP server of docs/protocol.md ("serve", after Vaughan):
// `Bench.dll async serve --port P --delay-ms D [--threads T]`. The article's
// CalculationService and CalculationController, behind HttpListener (ASP.NET
// Kestrel needs the ASP.NET Core runtime, which the PyPI .NET runtime does not
// ship), each request handled on the thread pool as Kestrel would.
//
// Written in the C# subset that both Roslyn and Mono's mcs 6.8 accept (see README.md).
using System;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Bench
{
    // The article's service: "double" takes 2·D, "halve" D (the article: 2 s and 1 s),
    // each a Task.Delay standing for a remote call. long, not the article's int:
    // NUM may be up to 2^31 - 1, and 2*NUM must not overflow.
    sealed class CalculationService
    {
        readonly int delayMs;

        public CalculationService(int delayMs)
        {
            this.delayMs = delayMs;
        }

        public long Double(long num)
        {
            Task.Delay(2 * delayMs).Wait();
            return num * 2;
        }

        public long Halve(long num)
        {
            Task.Delay(delayMs).Wait();
            return num / 2;
        }

        public async Task<long> DoubleAsync(long num)
        {
            await Task.Delay(2 * delayMs);
            return num * 2;
        }

        public async Task<long> HalveAsync(long num)
        {
            await Task.Delay(delayMs);
            return num / 2;
        }
    }

    // The article's controller, one action per style, written as the article wrote them.
    sealed class CalculationController
    {
        readonly CalculationService calculationService;

        public CalculationController(CalculationService calculationService)
        {
            this.calculationService = calculationService;
        }

        // sync
        public long Sync(long num)
        {
            var dbl = calculationService.Double(num);
            var half = calculationService.Halve(num);
            return dbl + half;
        }

        // sync-over-async
        public long SyncOverAsync(long num)
        {
            var dbl = calculationService.DoubleAsync(num).Result;
            var half = calculationService.HalveAsync(num).Result;
            return dbl + half;
        }

        // parallel
        public long ParallelCalc(long num)
        {
            long dbl = 0;
            long half = 0;
            Parallel.Invoke(
                () => dbl = calculationService.Double(num),
                () => half = calculationService.Halve(num)
            );
            return dbl + half;
        }

        // async
        public async Task<long> Async(long num)
        {
            var dbl = await calculationService.DoubleAsync(num);
            var half = await calculationService.HalveAsync(num);
            return dbl + half;
        }

        // when-all
        public async Task<long> AsyncWhenAll(long num)
        {
            var dblTask = calculationService.DoubleAsync(num);
            var halfTask = calculationService.HalveAsync(num);
            var results = await Task.WhenAll(dblTask, halfTask);
            return results.Sum();
        }
    }

    sealed class ServeOptions
    {
        public int Port = -1;
        public int DelayMs = -1;
        public int Threads;  // 0: not given

        // 2*D must fit an int (Task.Delay takes int milliseconds).
        public const int MaxDelayMs = int.MaxValue / 2;

        // args: what follows `async serve`.
        public static ServeOptions Parse(string[] args)
        {
            var o = new ServeOptions();
            for (int i = 0; i < args.Length; i += 2)
            {
                string name = args[i];
                if (name != "--port" && name != "--delay-ms" && name != "--threads")
                    throw new UsageException("serve: unknown argument '" + name + "'");
                if (i + 1 == args.Length)
                    throw new UsageException("serve: " + name + " needs a value");
                string value = args[i + 1];
                switch (name)
                {
                    case "--port": o.Port = Options.Int(name, value, 0, 65535); break;
                    case "--delay-ms": o.DelayMs = Options.Int(name, value, 1, MaxDelayMs); break;
                    case "--threads": o.Threads = Options.Int(name, value, 1, MaxWorkerThreads()); break;
                }
            }
            if (o.Port < 0)
                throw new UsageException("serve needs --port");
            if (o.DelayMs < 0)
                throw new UsageException("serve needs --delay-ms");
            return o;
        }

        public static int MaxWorkerThreads()
        {
            int workers, io;
            ThreadPool.GetMaxThreads(out workers, out io);
            return workers;
        }
    }

    static class Server
    {
        public static readonly string[] Styles = { "sync", "sync-over-async", "parallel", "async", "when-all" };

        static readonly ManualResetEventSlim stopping = new ManualResetEventSlim(false);
        static object[] signalRegistrations;  // kept alive: a collected registration unregisters

        // args: what follows `async serve`. Returns the exit status.
        public static int Run(string[] args)
        {
            ServeOptions options;
            try
            {
                options = ServeOptions.Parse(args);
            }
            catch (UsageException e)
            {
                Console.Error.WriteLine(e.Message);
                return 2;
            }
            if (options.Threads > 0)
            {
                // --threads T: the pool's minimum, the number of worker threads it creates
                // on demand before it starts injecting threads slowly; the maximum stays
                // the runtime's default (README.md).
                int workers, io;
                ThreadPool.GetMinThreads(out workers, out io);
                if (!ThreadPool.SetMinThreads(options.Threads, io))
                {
                    Console.Error.WriteLine("serve: ThreadPool.SetMinThreads(" + options.Threads + ") refused");
                    return 2;
                }
            }
            HandleSignals();

            HttpListener listener;
            int port;
            try
            {
                listener = Listen(options.Port, out port);
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("serve: cannot listen on 127.0.0.1:" + options.Port + ": " + OneLine(e.Message));
                return 1;
            }

            var controller = new CalculationController(new CalculationService(options.DelayMs));
            Task accepting = Accept(listener, controller);

            Console.Out.Write(ReadyLine(port, options.Threads) + "\n");
            Console.Out.Flush();

            stopping.Wait();
            GC.KeepAlive(signalRegistrations);
            listener.Close();  // stops accepting and drops the connections; Accept ends
            try
            {
                accepting.Wait(TimeSpan.FromSeconds(5));
            }
            catch (AggregateException)
            {
            }
            return 0;
        }

        // HttpListener cannot listen on port 0, so for P = 0 a TcpListener on
        // 127.0.0.1:0 asks the kernel for a free port, closes it, and HttpListener
        // takes that port; if another process took it in between, try another.
        static HttpListener Listen(int requested, out int port)
        {
            for (int attempt = 1; ; attempt++)
            {
                port = requested;
                if (requested == 0)
                {
                    var probe = new TcpListener(IPAddress.Loopback, 0);
                    probe.Start();
                    port = ((IPEndPoint)probe.LocalEndpoint).Port;
                    probe.Stop();
                }
                var listener = new HttpListener();
                // A literal address: the listener binds 127.0.0.1 only (a "+" or "*"
                // host would bind every interface). Requests must say Host: 127.0.0.1:P.
                listener.Prefixes.Add("http://127.0.0.1:" + port.ToString(CultureInfo.InvariantCulture) + "/");
                listener.IgnoreWriteExceptions = true;
                try
                {
                    listener.Start();
                    return listener;
                }
                catch (HttpListenerException)
                {
                    listener.Close();
                    if (requested != 0 || attempt == 10)
                        throw;
                }
            }
        }

        // The accept loop: each request is handed to the thread pool at once and
        // handled there, concurrently with the others, as Kestrel runs each request on
        // a pool thread; the loop never waits for a handler.
        static async Task Accept(HttpListener listener, CalculationController controller)
        {
            while (true)
            {
                HttpListenerContext context;
                try
                {
                    context = await listener.GetContextAsync();
                }
                catch (Exception)
                {
                    if (!listener.IsListening)
                        return;  // closed by the shutdown
                    continue;    // a connection that failed before its request was read
                }
                Dispatch(context, controller);
            }
        }

        // Not awaited: the handler's task is observed by Handle itself, which
        // catches everything.
        static void Dispatch(HttpListenerContext context, CalculationController controller)
        {
            Task.Run(() => Handle(context, controller));
        }

        // Runs on a pool thread. The sync styles block it for the whole request;
        // the async ones release it at each await.
        static async Task Handle(HttpListenerContext context, CalculationController controller)
        {
            try
            {
                if (context.Request.HttpMethod != "GET")
                {
                    context.Response.AddHeader("Allow", "GET");
                    await Respond(context, 405, "only GET");
                    return;
                }
                string path = context.Request.RawUrl;
                int query = path.IndexOf('?');
                if (query >= 0)
                    path = path.Substring(0, query);
                if (path == "/health")
                {
                    await Respond(context, 200, "ok");
                    return;
                }
                // /STYLE/NUM: STYLE one of Styles, NUM everything after the second slash.
                int slash = path.IndexOf('/', 1);
                string style = slash < 0 ? null : path.Substring(1, slash - 1);
                if (style == null || Array.IndexOf(Styles, style) < 0)
                {
                    await Respond(context, 404, "unknown style");
                    return;
                }
                int parsed;
                // NumberStyles.None: digits only (no sign, no spaces); int: below 2^31.
                if (!int.TryParse(path.Substring(slash + 1), NumberStyles.None, CultureInfo.InvariantCulture, out parsed))
                {
                    await Respond(context, 400, "NUM must be a decimal integer in [0, 2^31)");
                    return;
                }
                long num = parsed;
                long result;
                switch (style)
                {
                    case "sync": result = controller.Sync(num); break;
                    case "sync-over-async": result = controller.SyncOverAsync(num); break;
                    case "parallel": result = controller.ParallelCalc(num); break;
                    case "async": result = await controller.Async(num); break;
                    default: result = await controller.AsyncWhenAll(num); break;  // when-all
                }
                await Respond(context, 200, result.ToString(CultureInfo.InvariantCulture));
            }
            catch (Exception e)
            {
                // A client gone before its answer; anything else is a bug worth a line.
                if (!(e is HttpListenerException || e is System.IO.IOException || e is ObjectDisposedException))
                    Console.Error.WriteLine("serve: " + e.GetType().Name + ": " + OneLine(e.Message));
                try
                {
                    context.Response.Abort();
                }
                catch (Exception)
                {
                }
            }
        }

        static async Task Respond(HttpListenerContext context, int status, string body)
        {
            byte[] bytes = Encoding.ASCII.GetBytes(body);
            HttpListenerResponse response = context.Response;
            response.StatusCode = status;
            response.ContentType = "text/plain";
            response.ContentLength64 = bytes.Length;  // with HTTP/1.1, the connection stays open
            await response.OutputStream.WriteAsync(bytes, 0, bytes.Length);
            response.Close();
        }

        static string ReadyLine(int port, int threads)
        {
            var json = new StringBuilder();
            json.Append("{\"listening\": ").Append(port.ToString(CultureInfo.InvariantCulture));
            json.Append(", \"styles\": [");
            for (int i = 0; i < Styles.Length; i++)
                json.Append(i == 0 ? "" : ", ").Append(Program.Quote(Styles[i]));
            json.Append("], \"threads\": ").Append(threads > 0 ? threads.ToString(CultureInfo.InvariantCulture) : "null");
            json.Append(", \"runtime\": ").Append(Program.Quote(Program.RuntimeLabel()));
            return json.Append('}').ToString();
        }

        static string OneLine(string s)
        {
            return s.Replace('\r', ' ').Replace('\n', ' ');
        }

        // SIGTERM and SIGINT: cancel the runtime's default handling (which would end
        // the process at once) and let Run close the listener and return 0.
        // PosixSignalRegistration (.NET 6+) is reached by reflection, since the mcs
        // route compiles against the .NET Core 3.1 assemblies, which lack it.
        static void HandleSignals()
        {
            Type registration = Type.GetType("System.Runtime.InteropServices.PosixSignalRegistration, System.Runtime.InteropServices", true);
            Type context = Type.GetType("System.Runtime.InteropServices.PosixSignalContext, System.Runtime.InteropServices", true);
            Type signal = Type.GetType("System.Runtime.InteropServices.PosixSignal, System.Runtime.InteropServices", true);
            Type handlerType = typeof(Action<>).MakeGenericType(context);
            Delegate handler = Delegate.CreateDelegate(handlerType,
                typeof(Server).GetMethod("OnSignal", BindingFlags.NonPublic | BindingFlags.Static));
            MethodInfo create = registration.GetMethod("Create", new[] { signal, handlerType });
            signalRegistrations = new[]
            {
                create.Invoke(null, new object[] { Enum.Parse(signal, "SIGTERM"), handler }),
                create.Invoke(null, new object[] { Enum.Parse(signal, "SIGINT"), handler }),
            };
        }

        // An Action<PosixSignalContext>, bound by parameter contravariance.
        static void OnSignal(object context)
        {
            context.GetType().GetProperty("Cancel").SetValue(context, true);
            stopping.Set();
        }
    }
}
