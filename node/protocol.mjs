// The program side of docs/protocol.md: argument parsing, iterations, the
// JSON result. bench.mjs is the command-line entry point.
import process from "node:process";
import { parseArgs as parseOptions } from "node:util";
import { now, workloads } from "./workloads.mjs";

export const USAGE = `usage: bench.mjs WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]
       bench.mjs serve --port P --delay-ms D [--threads T]   (see bench.mjs serve --help)
       bench.mjs --version | --help

Runs one workload of docs/protocol.md and prints one JSON line on stdout.

  WORKLOAD         ${Object.keys(workloads).join(", ")}
  --n N            number of tasks (>= 1, required; skynet: leaves, a power of
                   ten up to 10^8, so that the sum is exact in a double)
  --iterations K   in-process iterations (>= 1, required)
  --buffer B       channel capacity, required by bounded (>= 0; 0 = rendezvous)
  --duration-ms D  how long each task sleeps, required by sleep (>= 1)
  --warmup-ms W    warm-up runs until they total W ms or number 10000 (>= 0, default 0)
  --version        print the runtime's version and engine
  -h, --help       print this help
`;

// option -> [key, minimum]; every value is a string of ASCII digits.
const NUMBERS = {
  n: ["n", 1],
  iterations: ["iterations", 1],
  buffer: ["buffer", 0],
  "duration-ms": ["durationMs", 1],
  "warmup-ms": ["warmupMs", 0],
};
// The options each workload needs besides --n and --iterations.
const NEEDS = { sleep: ["duration-ms"], bounded: ["buffer"] };

export class UsageError extends Error {}

// util.parseArgs (Node.js >= 18.3, Bun and Deno alike) does the option
// syntax: `--opt value` and `--opt=value`, unknown options, missing values.
// Its messages can span lines; the protocol wants exactly one.
function parseOptionSyntax(argv) {
  const options = { help: { type: "boolean", short: "h" }, version: { type: "boolean" } };
  for (const name of Object.keys(NUMBERS)) options[name] = { type: "string" };
  try {
    return parseOptions({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(String(err?.message ?? err).split(/\s+/).join(" "));
  }
}

// Returns { help: true }, { version: true } or the request
// { workload, n, iterations, buffer, durationMs, warmupMs } (buffer and
// durationMs undefined where the workload does not use them, warmupMs 0
// unless given); throws UsageError.
export function parseArgs(argv) {
  const { values, positionals } = parseOptionSyntax(argv);
  if (values.help) return { help: true };
  if (values.version && argv.length === 1) return { version: true };
  const [workload, ...extra] = positionals;
  if (workload === "serve") throw new UsageError("serve must come first: bench.mjs serve --port P --delay-ms D");
  if (!Object.hasOwn(workloads, workload ?? "")) {
    throw new UsageError(
      `expected a workload (${Object.keys(workloads).join(", ")}) as first argument, got ${JSON.stringify(workload ?? "")}`,
    );
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (values.version) throw new UsageError("--version takes no other arguments");
  const opts = { workload, warmupMs: 0 };
  for (const [name, [key, min]] of Object.entries(NUMBERS)) {
    const value = values[name];
    if (value === undefined) continue;
    const parsed = /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw new UsageError(`--${name} must be an integer from ${min} to 2^53-1, got ${JSON.stringify(value)}`);
    }
    opts[key] = parsed;
  }
  const missing = ["n", "iterations", ...(NEEDS[workload] ?? [])].filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`${workload} needs ${missing.map((name) => `--${name}`).join(" and ")}`);
  }
  if (workload === "skynet" && !SKYNET_SIZES.has(opts.n)) {
    throw new UsageError(
      `skynet needs N a power of ten (1, 10, 100, ...): 10 children a node, at most 10^8 (N(N-1)/2 exact in a double), got ${opts.n}`,
    );
  }
  return opts;
}

// skynet's N: powers of ten up to 10^8. Beyond, N(N-1)/2 passes 2^53 and the
// sum of doubles is no longer exact (and 1.1e9 promises would not fit anyway).
const SKYNET_SIZES = new Set(Array.from({ length: 9 }, (_, i) => 10 ** i));

const RUNTIME = globalThis.Bun
  ? { name: "Bun", version: globalThis.Bun.version, engine: "JavaScriptCore" }
  : globalThis.Deno
    ? { name: "Deno", version: globalThis.Deno.version.deno, engine: `V8 ${globalThis.Deno.version.v8}` }
    : { name: "Node.js", version: process.versions.node, engine: `V8 ${process.versions.v8}` };

// For `bench.mjs --version`, the registry's version command: "2.9.6, V8 15.0.245.2-rusty".
export const runtimeVersion = () => `${RUNTIME.version}, ${RUNTIME.engine}`;

// The JSON lines' runtime field: "Node.js 20.20.2".
export const runtimeLabel = () => `${RUNTIME.name} ${RUNTIME.version}`;

// --warmup-ms stops after this many runs even short of W ms: at N = 10 a run
// takes microseconds, and the JSON line lists every warm-up run.
export const MAX_WARMUP_RUNS = 10_000;

// docs/protocol.md's priming: before its first timed pass (and before any
// warm-up run), chain and chain-await run one untimed chain of
// min(N, PRIME_LINKS) links with the same code, so that the JIT has seen a
// relay resume before the cold pass; the JSON line says "primed": P.
export const PRIME_LINKS = 1000;
const PRIMED = new Set(["chain", "chain-await"]);

// A run that cannot report (a wrong priming answer): bench.mjs prints its
// message on one stderr line and exits 1.
export class RunError extends Error {}

// docs/protocol.md, "Collection between passes": one full, blocking
// collection before each pass (warm-up runs too) that follows something in
// this process (the priming or an earlier pass), outside the clock, so that
// no pass pays for collecting the previous pass's garbage and the peak RSS
// holds one pass, not two. BENCH_COLLECT=0 (exactly) skips it.
// A program that cannot collect exits 2 (bench.mjs) rather than skip the rule.
export class CollectError extends Error {}

const NO_GC =
  "gc() is not exposed: run Node.js with --expose-gc, Deno with --v8-flags=--expose-gc " +
  '(docs/protocol.md, "Collection between passes"), or set BENCH_COLLECT=0 to skip the collection';

// The collection to run between passes, or null under BENCH_COLLECT=0;
// throws CollectError when it is on and the runtime exposes none. env and
// global are process.env and globalThis, but for the tests.
export function collector(env = process.env, global = globalThis) {
  let setting;
  try {
    setting = env.BENCH_COLLECT;
  } catch (err) {
    // Deno asks for a permission to read any environment variable.
    const why = String(err?.message ?? err).split(/\s+/).join(" ");
    throw new CollectError(`cannot read BENCH_COLLECT: ${why} (Deno: run with --allow-env=BENCH_COLLECT)`);
  }
  if (setting === "0") return null;
  // Bun (JavaScriptCore): Bun.gc(true) is the synchronous, full collection.
  if (global.Bun) {
    const bun = global.Bun;
    return () => bun.gc(true);
  }
  // V8 (Node.js, Deno): gc() with no argument is a full, synchronous collection.
  if (typeof global.gc === "function") {
    const gc = global.gc;
    return () => gc();
  }
  throw new CollectError(NO_GC);
}

// maxWarmupRuns is MAX_WARMUP_RUNS and table the workloads, but for the
// tests; collect is collector()'s answer (bench.mjs passes it; null, no
// collection, only where a test does not look at it).
export async function run(opts, maxWarmupRuns = MAX_WARMUP_RUNS, table = workloads, collect = null) {
  const workload = table[opts.workload];
  // The priming chain: the same function, untimed, its answer checked.
  let primed;
  if (PRIMED.has(opts.workload)) {
    primed = Math.min(opts.n, PRIME_LINKS);
    const { result } = await workload({ ...opts, n: primed });
    if (result !== primed) {
      throw new RunError(`the priming ${opts.workload} of ${primed} links answered ${result}, not ${primed}`);
    }
  }
  // One run, timed the same way whether it is a warm-up run or an iteration;
  // the collection comes first, after the priming and before the clock.
  // Nothing of ours to collect before the first pass of a fresh process: a
  // full collection there only adds the collector's own structures to the
  // peak RSS (G1: sleep N = 1, 44 -> 51 MiB).
  let ranBefore = primed !== undefined;
  const timed = async () => {
    if (collect !== null && ranBefore) collect();
    ranBefore = true;
    const start = now();
    const out = await workload(opts);
    return { ns: Number(now() - start), ...out };
  };
  // Warm-up runs until they total W ms or number maxWarmupRuns, so that the
  // iterations measure the JIT's compiled code rather than its progress; the
  // last one crosses W (or is the maxWarmupRuns-th).
  const warmupNs = [];
  const warmupResults = [];
  for (let total = 0; total < opts.warmupMs * 1e6 && warmupNs.length < maxWarmupRuns; ) {
    const { ns, result } = await timed();
    warmupNs.push(ns);
    warmupResults.push(result);
    total += ns;
  }
  const results = [];
  const iterNs = [];
  let spawnNs;
  for (let k = 0; k < opts.iterations; k++) {
    const out = await timed();
    iterNs.push(out.ns);
    results.push(out.result);
    if (k === 0) spawnNs = out.spawnNs;
  }
  return {
    workload: opts.workload,
    n: opts.n,
    buffer: opts.workload === "bounded" ? opts.buffer : null,
    result: results.at(-1),
    results,
    iter_ns: iterNs,
    warmup_ns: warmupNs,
    warmup_results: warmupResults,
    ...(primed === undefined ? {} : { primed }),
    ...(spawnNs === undefined ? {} : { spawn_ns: spawnNs }),
    runtime: runtimeLabel(),
  };
}
