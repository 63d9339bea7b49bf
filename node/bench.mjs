// Benchmark program of docs/protocol.md, run unchanged by Node.js, Bun and Deno:
//   <runtime> bench.mjs WORKLOAD --n N [--buffer B] [--duration-ms D] [--iterations K]
//   <runtime> bench.mjs --version
// Prints one JSON line on stdout; bad arguments exit 2 with one line on stderr.
// It never calls process.exit(), which can cut off output still in a pipe.
import process from "node:process";
import { parseArgs, run, runtimeVersion, UsageError } from "./protocol.mjs";

async function main(argv) {
  if (argv.length === 1 && argv[0] === "--version") {
    process.stdout.write(`${runtimeVersion()}\n`);
    return;
  }
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`${JSON.stringify(await run(opts))}\n`);
}

await main(process.argv.slice(2));
