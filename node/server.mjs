// The HTTP server of docs/protocol.md ("serve", after Vaughan), on node:http:
//   <runtime> bench.mjs serve --port P --delay-ms D [--threads T]
// GET /STYLE/NUM answers 2*NUM + NUM/2 from the article's two simulated
// remote calls (calculation.mjs) in five styles. Every handler runs on the
// one main thread's event loop; the styles that block, block that loop, and
// the pool (pool.mjs) runs the work they wait for. See README.md, "The HTTP
// server".
import http from "node:http";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs as parseOptions } from "node:util";
import { Calculation } from "./calculation.mjs";
import { Pool } from "./pool.mjs";
import { runtimeLabel, UsageError } from "./protocol.mjs";

// The pool's size without --threads: parallel runs two calls at once, and no
// more than two pool jobs are ever in flight (pool.mjs).
export const DEFAULT_THREADS = 2;

export const SERVE_USAGE = `usage: bench.mjs serve --port P --delay-ms D [--threads T]

Serves docs/protocol.md's HTTP server on 127.0.0.1 until SIGTERM or SIGINT.

  --port P        TCP port on 127.0.0.1 (0 = a free port)
  --delay-ms D    the simulated calls take 2*D ms (double) and D ms (halve) (>= 1)
  --threads T     worker threads in the pool that runs parallel's blocking calls
                  and sync-over-async's non-blocking ones (1 to 256; default ${DEFAULT_THREADS})
  -h, --help      print this help
`;

// option -> [key, minimum, maximum]: a TCP port; 2*D must fit a timer (2^31 - 1
// ms, as Go's and C#'s limits); each thread is a worker with its own V8 heap
// (about 10 MiB), and more than two are never busy at once.
const NUMBERS = {
  port: ["port", 0, 65535],
  "delay-ms": ["delayMs", 1, 2 ** 30 - 1],
  threads: ["threads", 1, 256],
};

// argv: what follows "serve". Returns { help: true } or { port, delayMs,
// threads } (threads undefined when not given); throws UsageError.
export function parseServeArgs(argv) {
  const options = { help: { type: "boolean", short: "h" } };
  for (const name of Object.keys(NUMBERS)) options[name] = { type: "string" };
  let parsed;
  try {
    parsed = parseOptions({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`serve: ${oneLine(err?.message ?? err)}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length > 0) throw new UsageError(`serve: unexpected argument ${JSON.stringify(positionals[0])}`);
  const opts = {};
  for (const [name, [key, min, max]] of Object.entries(NUMBERS)) {
    const value = values[name];
    if (value === undefined) continue;
    const number = /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!(number >= min && number <= max)) {
      throw new UsageError(`serve: --${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    opts[key] = number;
  }
  const missing = ["port", "delay-ms"].filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new UsageError(`serve needs ${missing.map((name) => `--${name}`).join(" and ")}`);
  return opts;
}

export const STYLE_NAMES = ["sync", "sync-over-async", "parallel", "async", "when-all"];

// The article's controller, one handler per style, each returning the sum.
// calculation's blocking calls block the main thread; pool.start() posts a
// call to a worker and pool.result() blocks the main thread until it is done.
export function makeStyles(calculation, pool) {
  return {
    // Double, then halve, each blocking the event loop (Atomics.wait).
    sync(num) {
      const dbl = calculation.double(num);
      const half = calculation.halve(num);
      return dbl + half;
    },
    // C#'s DoubleAsync(num).Result: start the non-blocking call, then block
    // on its result. A promise cannot settle while its own thread blocks (the
    // timer would need the very event loop that waits), so the call starts on
    // a pool worker's event loop, and the main thread blocks until it is done.
    "sync-over-async"(num) {
      const dbl = pool.result(pool.start("doubleAsync", num));
      const half = pool.result(pool.start("halveAsync", num));
      return dbl + half;
    },
    // Parallel.Invoke: the two blocking calls on two pool threads at once,
    // the main thread blocked until both are done.
    parallel(num) {
      const dbl = pool.start("double", num);
      const half = pool.start("halve", num);
      return pool.result(dbl) + pool.result(half);
    },
    // Await double, then await halve: timer promises, the loop stays free.
    async async(num) {
      const dbl = await calculation.doubleAsync(num);
      const half = await calculation.halveAsync(num);
      return dbl + half;
    },
    // Task.WhenAll: start both, then await both.
    async "when-all"(num) {
      const [dbl, half] = await Promise.all([calculation.doubleAsync(num), calculation.halveAsync(num)]);
      return dbl + half;
    },
  };
}

function oneLine(text) {
  return String(text).split(/\s+/).join(" ").trim();
}

// Every body is ASCII, so its length in characters is its length in bytes.
function reply(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "text/plain", "Content-Length": body.length, ...headers });
  res.end(body);
}

async function handle(styles, req, res) {
  if (req.method !== "GET") return reply(res, 405, "only GET", { Allow: "GET" });
  const path = req.url.split("?", 1)[0];
  if (path === "/health") return reply(res, 200, "ok");
  // "/STYLE/NUM": the style runs to the second slash, NUM is everything after it.
  const slash = path.indexOf("/", 1);
  const style = path.startsWith("/") && slash > 0 ? path.slice(1, slash) : "";
  if (!Object.hasOwn(styles, style)) return reply(res, 404, "unknown style");
  const text = path.slice(slash + 1);
  const num = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(num < 2 ** 31)) return reply(res, 400, "NUM must be a decimal integer in [0, 2^31)");
  let value;
  try {
    value = await styles[style](num);
  } catch (err) {
    return reply(res, 500, oneLine(err?.message ?? err));
  }
  reply(res, 200, String(value));
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(server.address().port);
    });
  });
}

// Deno's permissions, asked first so that a missing one is a one-line error:
// node:http throws a missing net permission from a later tick (not through
// the "error" event), and a worker that cannot read its modules prints
// Deno's own multi-line error. Returns the flags missing.
function denoMissing(port) {
  const deno = globalThis.Deno;
  if (!deno) return [];
  const dir = fileURLToPath(new URL(".", import.meta.url)).replace(/\/$/, "");
  const needs = [
    [{ name: "net", host: `127.0.0.1:${port}` }, "--allow-net=127.0.0.1"],
    // The pool's workers load pool-worker.mjs and what it imports from this folder.
    [{ name: "read", path: dir }, `--allow-read=${dir}`],
  ];
  const granted = (descriptor) => deno.permissions.querySync(descriptor).state === "granted";
  return needs.filter(([descriptor]) => !granted(descriptor)).map(([, flag]) => flag);
}

function fail(what, err) {
  process.stderr.write(`bench.mjs: serve: ${what}: ${oneLine(err?.message ?? err)}\n`);
  return 1;
}

// Starts the pool, listens on 127.0.0.1, prints the ready line and serves
// until SIGTERM or SIGINT. Resolves to the exit status.
export async function serve({ port, delayMs, threads }) {
  const missing = denoMissing(port);
  if (missing.length > 0) return fail("missing permissions", `Deno needs ${missing.join(" ")}`);
  let pool;
  try {
    pool = await Pool.start(threads ?? DEFAULT_THREADS, delayMs);
  } catch (err) {
    return fail("cannot start the worker pool", err);
  }
  const styles = makeStyles(new Calculation(delayMs), pool);
  const server = http.createServer((req, res) => {
    handle(styles, req, res).catch(() => res.destroy());
  });
  // No idle timeout on keep-alive connections (Node.js closes them after 5 s
  // by default; Go's net/http keeps them): a load generator's connections stay
  // open between phases, until it closes them or the server stops.
  server.keepAliveTimeout = 0;
  let listening;
  try {
    listening = await listen(server, port);
  } catch (err) {
    await pool.close();
    return fail(`cannot listen on 127.0.0.1:${port}`, err);
  }

  const signalled = new Promise((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  const ready = { listening, styles: STYLE_NAMES, threads: threads ?? null, runtime: runtimeLabel() };
  process.stdout.write(`${JSON.stringify(ready)}\n`);

  await signalled;
  process.removeAllListeners("SIGTERM");
  process.removeAllListeners("SIGINT");
  // Stop accepting, drop every connection (requests in flight included, as
  // Go's server.Close does) and the pool; the event loop then runs dry (the
  // timers of requests in flight are unref'd: calculation.mjs).
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections?.();
  await Promise.all([closed, pool.close()]);
  return 0;
}
