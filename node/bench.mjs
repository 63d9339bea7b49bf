// Benchmark program of docs/protocol.md, run unchanged by Node.js, Bun and Deno:
//   <runtime> bench.mjs WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D]
//                       [--warmup-ms W]
//   <runtime> bench.mjs serve --port P --delay-ms D [--threads T]
//   <runtime> bench.mjs --version | --help
// A workload prints one JSON line on stdout; serve prints its ready line and
// serves until SIGTERM or SIGINT (server.mjs). Bad arguments exit 2 with one
// line on stderr, so does a workload run without a gc() to collect with
// (docs/protocol.md, "Collection between passes"; BENCH_COLLECT=0 skips the
// collection), and a wrong priming answer (docs/protocol.md, "Priming") exits
// 1 with one line on stderr. It never calls process.exit(), which can cut off
// output still in a pipe: the exit status is set and the event loop runs dry.
import process from "node:process";
import { CollectError, collector, parseArgs, run, RunError, runtimeVersion, USAGE, UsageError } from "./protocol.mjs";

// Loaded only for serve, so the workloads' runs do not load node:http and the pool.
const server = process.argv[2] === "serve" ? await import("./server.mjs") : null;

function parse(argv) {
  try {
    return server ? { serve: true, ...server.parseServeArgs(argv.slice(1)) } : parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench.mjs: error: ${err.message} (see ${server ? "serve --help" : "--help"})\n`);
    process.exitCode = 2;
    return null;
  }
}

async function main(argv) {
  const opts = parse(argv);
  if (opts === null) return;
  if (opts.help) {
    process.stdout.write(opts.serve ? server.SERVE_USAGE : USAGE);
  } else if (opts.version) {
    process.stdout.write(`${runtimeVersion()}\n`);
  } else if (opts.serve) {
    process.exitCode = await server.serve(opts);
  } else {
    let collect;
    try {
      collect = collector();
    } catch (err) {
      if (!(err instanceof CollectError)) throw err;
      process.stderr.write(`bench.mjs: error: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    let out;
    try {
      out = await run(opts, undefined, undefined, collect);
    } catch (err) {
      if (!(err instanceof RunError)) throw err;
      process.stderr.write(`bench.mjs: error: ${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  }
}

await main(process.argv.slice(2));
