// docs/protocol.md, "Collection between passes": one full, blocking
// collection before each pass (warm-up runs and timed passes) that follows
// the priming or an earlier pass, none before the first pass of a process
// that ran nothing before it, outside the clock; BENCH_COLLECT=0 skips it; a
// runtime without gc() exits 2 with one stderr line rather than skip the rule.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CollectError, collector, MAX_WARMUP_RUNS, run } from "../protocol.mjs";

// A busy wait: the collection is synchronous, and so is this stand-in.
const block = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("collector", () => {
  it("calls Bun.gc(true) on Bun and gc() on V8, once a call", () => {
    const calls = [];
    collector({}, { Bun: { gc: (...args) => calls.push(["Bun.gc", ...args]) } })();
    collector({}, { gc: (...args) => calls.push(["gc", ...args]) })();
    assert.deepEqual(calls, [["Bun.gc", true], ["gc"]]);
  });

  it("is null (no collection) under BENCH_COLLECT=0, exactly", () => {
    let calls = 0;
    const global = { gc: () => calls++ };
    assert.equal(collector({ BENCH_COLLECT: "0" }, global), null);
    assert.equal(collector({ BENCH_COLLECT: "0" }, {}), null, "no gc() needed to skip it");
    for (const value of [undefined, "", "1", "00", "false", " 0"]) {
      const collect = collector({ BENCH_COLLECT: value }, global);
      assert.equal(typeof collect, "function", JSON.stringify(value));
      collect();
    }
    assert.equal(calls, 6);
  });

  it("throws a one-line CollectError when collecting and no gc() is exposed", () => {
    for (const env of [{}, { BENCH_COLLECT: "1" }]) {
      assert.throws(
        () => collector(env, {}),
        (err) => err instanceof CollectError && /--expose-gc/.test(err.message) && !/[\n\r]/.test(err.message),
      );
    }
    assert.throws(() => collector({}, { gc: "not a function" }), CollectError);
  });

  it("turns a refused read of BENCH_COLLECT (Deno's permission) into a one-line CollectError", () => {
    const env = {
      get BENCH_COLLECT() {
        throw new Error('Requires env access to "BENCH_COLLECT",\nrun again with the --allow-env flag');
      },
    };
    assert.throws(
      () => collector(env, { gc() {} }),
      (err) => err instanceof CollectError && /--allow-env=BENCH_COLLECT/.test(err.message) && !/[\n\r]/.test(err.message),
    );
  });
});

describe("run's collection", () => {
  // A stand-in workload and collection that log their calls; the collection
  // takes 250 ms, so a pass under 250 ms did not time it.
  const standIn = (workload, log, workMs) => ({
    [workload]: async (opts) => {
      log.push(`run ${opts.n}`);
      await new Promise((done) => setTimeout(done, workMs));
      return { result: opts.n };
    },
  });

  // [workload, N, primed, --warmup-ms]
  for (const [workload, n, primed, warmupMs] of [
    ["chain", 2000, 1000, 5],
    ["chain-await", 5, 5, 0],
    ["bounded", 7, null, 5],
    ["bounded", 7, null, 0],
  ]) {
    const first = primed === null ? `no collection before the first ${warmupMs > 0 ? "warm-up run" : "iteration"}` : "after the priming";
    it(`${workload}, --warmup-ms ${warmupMs}: one collection before each later warm-up run and timed pass, ${first}, outside the clock`, async () => {
      const log = [];
      const collect = () => {
        log.push("collect");
        block(250);
      };
      const out = await run(
        { workload, n, buffer: 1, iterations: 3, warmupMs },
        MAX_WARMUP_RUNS,
        standIn(workload, log, 2),
        collect,
      );
      const passes = out.warmup_ns.length + out.iter_ns.length;
      assert.equal(out.warmup_ns.length >= 1, warmupMs > 0);
      assert.equal(out.iter_ns.length, 3);
      const expected = [...(primed === null ? [] : [`run ${primed}`])];
      for (let k = 0; k < passes; k++) expected.push(...(primed === null && k === 0 ? [] : ["collect"]), `run ${n}`);
      assert.deepEqual(log, expected);
      assert.ok(out.iter_ns.every((ns) => ns < 250e6), `iter_ns ${out.iter_ns}`);
      assert.ok(out.warmup_ns.every((ns) => ns < 250e6), `warmup_ns ${out.warmup_ns}`);
      assert.equal(out.primed, primed ?? undefined);
    });
  }

  it("collects with the runtime's gc() as collector() finds it, and not at all under BENCH_COLLECT=0", async () => {
    // [env, workload (chain primes, sleep not), --warmup-ms (capped at 2 runs), collections]
    for (const [env, workload, warmupMs, expected] of [
      [{}, "chain", 60_000, 2 + 3],
      [{ BENCH_COLLECT: "1" }, "chain", 0, 3],
      [{}, "sleep", 60_000, 2 + 3 - 1],
      [{}, "sleep", 0, 3 - 1],
      [{ BENCH_COLLECT: "0" }, "chain", 60_000, 0],
    ]) {
      let calls = 0;
      const collect = collector(env, { gc: () => calls++ });
      const out = await run({ workload, n: 50, durationMs: 1, iterations: 3, warmupMs }, 2, undefined, collect);
      assert.deepEqual(out.results, [50, 50, 50]);
      assert.equal(out.warmup_ns.length, warmupMs > 0 ? 2 : 0);
      assert.equal(calls, expected, `${workload} ${JSON.stringify(env)}`);
    }
  });
});

// bench.mjs as a process. The runtimes with their gc() exposed (impls.toml's
// run commands), and without (where the runtime can hide it).
const here = fileURLToPath(new URL("..", import.meta.url));
const nodeBin = process.execPath;
const bunBin = `${here}node_modules/@oven/bun-linux-x64/bin/bun`;
const denoBin = `${here}node_modules/@deno/linux-x64-glibc/deno`;
const deno = [denoBin, "run", "--no-prompt", "--allow-env=BENCH_COLLECT"];
const runtimes = {
  nodejs: { binary: nodeBin, exposed: ["--expose-gc"], hidden: [], trace: ["--trace-gc"] },
  bun: { binary: bunBin, exposed: [], hidden: null, trace: null },
  deno: { binary: denoBin, exposed: ["--v8-flags=--expose-gc"], hidden: [], trace: ["--v8-flags=--trace-gc"] },
};
const prefix = (id, flags) => (id === "deno" ? [...deno.slice(1), ...flags] : flags);

const bench = (id, flags, argv, extraEnv = {}) => {
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1", ...extraEnv };
  if (!("BENCH_COLLECT" in extraEnv)) delete env.BENCH_COLLECT;
  return spawnSync(runtimes[id].binary, [...prefix(id, flags), `${here}bench.mjs`, ...argv], { encoding: "utf8", env });
};

for (const [id, { binary, exposed, hidden, trace }] of Object.entries(runtimes)) {
  describe(`bench.mjs's collection on ${id}`, { skip: !existsSync(binary) && `${binary} missing: run npm ci` }, () => {
    it("prints the JSON line with the collection on and with BENCH_COLLECT=0", () => {
      for (const extraEnv of [{}, { BENCH_COLLECT: "0" }]) {
        const { status, stdout, stderr } = bench(id, exposed, ["chain", "--n", "1000", "--iterations", "2"], extraEnv);
        assert.equal(status, 0, stderr);
        assert.equal(stdout.trimEnd().split("\n").length, 1);
        const out = JSON.parse(stdout);
        assert.deepEqual(out.results, [1000, 1000]);
        assert.equal(out.primed, 1000);
      }
    });

    // V8's --trace-gc logs each gc() call as a Mark-Compact for "testing".
    it("runs one full collection per pass after the first, or per pass after the priming (V8's --trace-gc)", { skip: trace === null && "no V8 trace" }, () => {
      const sleep = ["sleep", "--n", "1", "--duration-ms", "2", "--iterations", "3"];
      // [env, argv, collections given the passes]
      for (const [extraEnv, argv, collections] of [
        [{}, [...sleep, "--warmup-ms", "5"], (passes) => passes - 1],
        [{}, sleep, (passes) => passes - 1],
        [{}, ["chain", "--n", "10", "--iterations", "3"], (passes) => passes],
        [{ BENCH_COLLECT: "0" }, [...sleep, "--warmup-ms", "5"], () => 0],
      ]) {
        const flags = id === "deno" ? ["--v8-flags=--expose-gc,--trace-gc"] : [...exposed, ...trace];
        const { status, stdout, stderr } = bench(id, flags, argv, extraEnv);
        assert.equal(status, 0, stderr);
        const json = stdout.split("\n").find((line) => line.startsWith("{"));
        const out = JSON.parse(json);
        const testing = `${stdout}\n${stderr}`.split("\n").filter((line) => /Mark-Compact.*\btesting\b/.test(line));
        const passes = out.warmup_ns.length + out.iter_ns.length;
        assert.equal(out.warmup_ns.length >= 1, argv.includes("--warmup-ms"));
        assert.equal(testing.length, collections(passes), `${argv.join(" ")} ${JSON.stringify(extraEnv)}`);
      }
    });

    it("exits 2 with one stderr line and nothing on stdout without gc(), runs with BENCH_COLLECT=0", { skip: hidden === null && "Bun.gc is always there" }, () => {
      const argv = ["chain", "--n", "10", "--iterations", "1"];
      const missing = bench(id, hidden, argv);
      assert.equal(missing.status, 2, missing.stderr);
      assert.equal(missing.stdout, "");
      assert.match(missing.stderr, /^bench\.mjs: error: gc\(\) is not exposed: [^\n]*--expose-gc[^\n]*\n$/);
      const skipped = bench(id, hidden, argv, { BENCH_COLLECT: "0" });
      assert.equal(skipped.status, 0, skipped.stderr);
      assert.equal(JSON.parse(skipped.stdout).result, 10);
      // --version and --help run no pass: no gc() needed.
      for (const flag of ["--version", "--help"]) assert.equal(bench(id, hidden, [flag]).status, 0, flag);
    });

    if (id === "deno") {
      it("exits 2 with one stderr line without the permission to read BENCH_COLLECT", () => {
        const { status, stdout, stderr } = spawnSync(
          denoBin,
          ["run", "--no-prompt", "--v8-flags=--expose-gc", `${here}bench.mjs`, "chain", "--n", "10", "--iterations", "1"],
          { encoding: "utf8", env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" } },
        );
        assert.equal(status, 2, stderr);
        assert.equal(stdout, "");
        assert.match(stderr, /^bench\.mjs: error: cannot read BENCH_COLLECT: [^\n]*--allow-env=BENCH_COLLECT\)\n$/);
      });
    }
  });
}
