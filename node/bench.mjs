// Benchmark program of docs/protocol.md, run unchanged by Node.js, Bun and Deno:
//   <runtime> bench.mjs WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D]
//   <runtime> bench.mjs --version | --help
// Prints one JSON line on stdout; bad arguments exit 2 with one line on stderr.
// It never calls process.exit(), which can cut off output still in a pipe.
import process from "node:process";
import { parseArgs, run, runtimeVersion, USAGE, UsageError } from "./protocol.mjs";

async function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench.mjs: error: ${err.message} (see --help)\n`);
    process.exitCode = 2;
    return;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
  } else if (opts.version) {
    process.stdout.write(`${runtimeVersion()}\n`);
  } else {
    process.stdout.write(`${JSON.stringify(await run(opts))}\n`);
  }
}

await main(process.argv.slice(2));
