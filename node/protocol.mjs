// The program side of docs/protocol.md: argument parsing, iterations, the
// JSON result. bench.mjs is the command-line entry point.
import process from "node:process";
import { now, workloads } from "./workloads.mjs";

const DEFAULT_ITERATIONS = { sleep: 1, chain: 2, "chain-await": 2, bounded: 10 };

// option -> [key, minimum]
const OPTIONS = {
  "--n": ["n", 1],
  "--buffer": ["buffer", 0],
  "--duration-ms": ["durationMs", 1],
  "--iterations": ["iterations", 1],
};

export class UsageError extends Error {}

export function parseArgs(argv) {
  const [workload, ...rest] = argv;
  if (!Object.hasOwn(workloads, workload ?? "")) {
    throw new UsageError(
      `expected a workload (${Object.keys(workloads).join(", ")}) as first argument, got ${JSON.stringify(workload ?? "")}`,
    );
  }
  const opts = { workload, buffer: 1, durationMs: 10000, iterations: DEFAULT_ITERATIONS[workload] };
  let sawN = false;
  for (let i = 0; i < rest.length; i++) {
    let [name, value] = rest[i].split(/=(.*)/s);
    if (!Object.hasOwn(OPTIONS, name)) throw new UsageError(`unknown option ${JSON.stringify(name)}`);
    if (value === undefined) {
      if (i + 1 === rest.length) throw new UsageError(`${name} needs a value`);
      value = rest[++i];
    }
    const [key, min] = OPTIONS[name];
    const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw new UsageError(`${name} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
    }
    opts[key] = parsed;
    sawN ||= key === "n";
  }
  if (!sawN) throw new UsageError("--n is required");
  return opts;
}

const RUNTIME = globalThis.Bun
  ? { name: "Bun", version: globalThis.Bun.version, engine: "JavaScriptCore" }
  : globalThis.Deno
    ? { name: "Deno", version: globalThis.Deno.version.deno, engine: `V8 ${globalThis.Deno.version.v8}` }
    : { name: "Node.js", version: process.versions.node, engine: `V8 ${process.versions.v8}` };

// For `bench.mjs --version`, the registry's version command: "2.9.6, V8 15.0.245.2-rusty".
export const runtimeVersion = () => `${RUNTIME.version}, ${RUNTIME.engine}`;

export async function run(opts) {
  const workload = workloads[opts.workload];
  const results = [];
  const iterNs = [];
  let spawnNs;
  for (let k = 0; k < opts.iterations; k++) {
    const start = now();
    const out = await workload(opts);
    iterNs.push(Number(now() - start));
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
    ...(spawnNs === undefined ? {} : { spawn_ns: spawnNs }),
    runtime: `${RUNTIME.name} ${RUNTIME.version}`,
  };
}
