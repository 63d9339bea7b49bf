import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { MAX_WARMUP_RUNS, PRIME_LINKS, parseArgs, run, RunError, UsageError } from "../protocol.mjs";
import { workloads } from "../workloads.mjs";

// docs/protocol.md's bad input: the one table, which harness/tests/test_conformance.py
// runs against every implementation. badTable(w): the cases with workload w,
// those of the workloads we declare, and each workload we do not declare.
const table = JSON.parse(readFileSync(new URL("../../docs/protocol-bad-input.json", import.meta.url), "utf8"));
const expand = (args, w) => args.flatMap((a) => (a === "{required}" ? table.required[w] : [a === "{w}" ? w : a]));
const undeclared = Object.keys(table.required).filter((w) => !(w in workloads));
const badTable = (w) =>
  table.cases.flatMap((c) => {
    if (c.when === undefined || c.when === "declared" || c.when in workloads) return [expand(c.args, w)];
    return c.when === "undeclared" ? undeclared.map((u) => expand(c.args, u)) : [];
  });
// serve's cases: bench.mjs serves too.
const serveBad = table.cases.filter((c) => c.when === "http").map((c) => c.args);

// Ours beyond the table.
const moreBad = [
  ["chain", "--n", "1.5", "--iterations", "1"],
  ["chain", "--n", "1e3", "--iterations", "1"],
  ["chain", "--n", "", "--iterations", "1"],
  ["chain", "--n", "+5", "--iterations", "1"],
  ["chain", "--n", "0x10", "--iterations", "1"],
  ["chain", "--n", "\u0665", "--iterations", "1"],
  ["chain", "--n", "9007199254740992", "--iterations", "1"], // 2^53: not exact in a double
  ["chain", "--n", "--iterations", "1"],
  ["chain", "--n", "1", "--iterations"],
  ["chain", "--n", "1", "--iterations", "1", "extra"],
  ["chain", "--n", "1", "--iterations", "1", "--verbose"],
  ["chain", "--n", "1", "--iterations", "1", "--bogus\nsecond line"],
  ["chain", "--n", "1", "--iterations", "1", "--version"],
  ["chain", "--help=yes"],
  ["skynet", "--n", "20", "--iterations", "1"], // not a power of ten
  ["skynet", "--n", "1001", "--iterations", "1"],
  ["skynet", "--n", "1000000000", "--iterations", "1"], // 10^9: N(N-1)/2 not exact in a double
];

// --warmup-ms: negative, not an integer, no value.
const warmupBad = [
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "-1"],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms=-1"],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "x"],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "1.5"],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", ""],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms", "9007199254740992"],
  ["chain", "--n", "1", "--iterations", "1", "--warmup-ms"],
  ["chain", "--warmup-ms", "--n", "1", "--iterations", "1"],
];

describe("parseArgs", () => {
  it("requires --n and --iterations, --buffer for bounded, --duration-ms for sleep", () => {
    assert.deepEqual(parseArgs(["bounded", "--n", "5", "--iterations", "3", "--buffer", "0"]), {
      workload: "bounded",
      n: 5,
      iterations: 3,
      buffer: 0,
      warmupMs: 0,
    });
    assert.deepEqual(parseArgs(["sleep", "--n", "5", "--iterations", "1", "--duration-ms", "20"]), {
      workload: "sleep",
      n: 5,
      iterations: 1,
      durationMs: 20,
      warmupMs: 0,
    });
    assert.deepEqual(parseArgs(["chain", "--n", "5", "--iterations", "2"]), {
      workload: "chain",
      n: 5,
      iterations: 2,
      warmupMs: 0,
    });
    for (const n of [1, 10, 100_000_000]) {
      assert.deepEqual(parseArgs(["skynet", "--n", String(n), "--iterations", "2"]), {
        workload: "skynet",
        n,
        iterations: 2,
        warmupMs: 0,
      });
    }
  });

  it("reads --opt value and --opt=value, in any order", () => {
    const opts = parseArgs(["bounded", "--iterations=4", "--n=3", "--buffer", "0"]);
    assert.deepEqual(opts, { workload: "bounded", n: 3, buffer: 0, iterations: 4, warmupMs: 0 });
    assert.deepEqual(parseArgs(["--n", "3", "--iterations", "1", "chain"]), {
      workload: "chain",
      n: 3,
      iterations: 1,
      warmupMs: 0,
    });
  });

  it("reads --warmup-ms for every workload, 0 when absent", () => {
    for (const warmupMs of [0, 1, 250]) {
      for (const argv of [
        ["chain", "--n", "5", "--iterations", "2"],
        ["chain-await", "--n", "5", "--iterations", "2"],
        ["bounded", "--n", "5", "--iterations", "2", "--buffer", "1"],
        ["skynet", "--n", "10", "--iterations", "2"],
        ["sleep", "--n", "5", "--iterations", "2", "--duration-ms", "1"],
      ]) {
        assert.equal(parseArgs([...argv, "--warmup-ms", String(warmupMs)]).warmupMs, warmupMs);
        assert.equal(parseArgs([...argv, `--warmup-ms=${warmupMs}`]).warmupMs, warmupMs);
      }
    }
  });

  it("recognises --help, -h and --version", () => {
    assert.deepEqual(parseArgs(["--help"]), { help: true });
    assert.deepEqual(parseArgs(["-h"]), { help: true });
    assert.deepEqual(parseArgs(["chain", "-h"]), { help: true });
    assert.deepEqual(parseArgs(["--version"]), { version: true });
  });

  it("rejects bad arguments with a one-line message", () => {
    const bad = [...Object.keys(workloads).flatMap(badTable), ...moreBad, ...warmupBad];
    for (const argv of bad) {
      assert.throws(() => parseArgs(argv), (err) => err instanceof UsageError && !/[\n\r]/.test(err.message), argv.join(" "));
    }
  });
});

it("run: K iterations, echoed request, buffer only for bounded", async () => {
  const out = await run({ workload: "bounded", n: 4, buffer: 0, durationMs: 1, iterations: 3, warmupMs: 0 });
  assert.equal(out.buffer, 0);
  assert.deepEqual(out.results, [6, 6, 6]);
  assert.equal(out.result, 6);
  assert.equal(out.iter_ns.length, 3);
  assert.ok(out.iter_ns.every((ns) => Number.isInteger(ns) && ns > 0));
  assert.equal(out.spawn_ns, undefined);
  assert.deepEqual(out.warmup_ns, []);
  assert.deepEqual(out.warmup_results, []);

  const slept = await run({ workload: "sleep", n: 10, buffer: 1, durationMs: 20, iterations: 1, warmupMs: 0 });
  assert.equal(slept.buffer, null);
  // libuv's timers start from the loop's cached millisecond clock and may fire
  // up to 1 ms early: the protocol allows 5 ms of slack (docs/protocol.md)
  assert.ok(slept.iter_ns[0] >= 15e6, `slept ${slept.iter_ns[0]} ns`);
  assert.ok(Number.isInteger(slept.spawn_ns));
});

// The warm-up rule: runs until their total reaches W ms, the last one crossing it.
function checkWarmup(out, warmupMs, expected, iterations) {
  const ns = out.warmup_ns;
  assert.ok(ns.length >= 1);
  assert.ok(ns.every((t) => Number.isInteger(t) && t > 0));
  assert.deepEqual(out.warmup_results, ns.map(() => expected));
  const total = ns.reduce((a, b) => a + b, 0);
  assert.ok(total >= warmupMs * 1e6, `warm-up total ${total} ns`);
  assert.ok(total - ns.at(-1) < warmupMs * 1e6, `warm-up total ${total} ns before the last`);
  assert.deepEqual(out.results, Array(iterations).fill(expected));
  assert.equal(out.iter_ns.length, iterations);
}

it("run: warm-up runs until they total W ms, then K iterations", async () => {
  for (const [opts, expected] of [
    [{ workload: "bounded", n: 1000, buffer: 1, iterations: 2, warmupMs: 30 }, 499500],
    [{ workload: "skynet", n: 100, iterations: 3, warmupMs: 10 }, 4950],
    [{ workload: "sleep", n: 10, durationMs: 20, iterations: 1, warmupMs: 50 }, 10],
  ]) {
    const out = await run(opts);
    checkWarmup(out, opts.warmupMs, expected, opts.iterations);
  }
  // The first timed iteration's spawn time, not a warm-up run's.
  const slept = await run({ workload: "sleep", n: 10, durationMs: 20, iterations: 1, warmupMs: 1 });
  assert.ok(Number.isInteger(slept.spawn_ns));
});

it("run: the warm-up stops after maxWarmupRuns runs, whatever W", async () => {
  // The program's cap is MAX_WARMUP_RUNS; 3 here, with W = 60 s: three runs, at once.
  assert.equal(MAX_WARMUP_RUNS, 10_000);
  const start = performance.now();
  const out = await run({ workload: "bounded", n: 10, buffer: 1, iterations: 2, warmupMs: 60_000 }, 3);
  assert.ok(performance.now() - start < 10_000);
  assert.equal(out.warmup_ns.length, 3);
  assert.ok(out.warmup_ns.every((t) => Number.isInteger(t) && t > 0));
  assert.deepEqual(out.warmup_results, [45, 45, 45]);
  assert.deepEqual(out.results, [45, 45]);
});

// docs/protocol.md's priming: one untimed chain of min(N, 1000) links before
// the warm-up and the K iterations, reported as "primed".
it("run: chain and chain-await prime one chain of min(N, 1000) links, untimed", async () => {
  assert.equal(PRIME_LINKS, 1000);
  for (const workload of ["chain", "chain-await"]) {
    for (const n of [5, 2000]) {
      const out = await run({ workload, n, iterations: 3, warmupMs: 0 });
      assert.equal(out.primed, Math.min(n, 1000), `${workload} n=${n}`);
      assert.deepEqual(out.results, [n, n, n]);
      assert.equal(out.iter_ns.length, 3);
      assert.deepEqual(out.warmup_ns, []);
    }
  }
  for (const opts of [
    { workload: "bounded", n: 5, buffer: 0, iterations: 1, warmupMs: 0 },
    { workload: "skynet", n: 10, iterations: 1, warmupMs: 0 },
    { workload: "sleep", n: 5, durationMs: 1, iterations: 1, warmupMs: 0 },
  ]) {
    assert.equal("primed" in (await run(opts)), false, opts.workload);
  }
});

it("run: the priming comes first, same function, and is in no iteration's time", async () => {
  // A stand-in workload that records each call's N and takes 300 ms at the
  // priming's size only: iterations under 300 ms did not time it.
  for (const workload of ["chain", "chain-await"]) {
    for (const [n, warmupMs] of [
      [5, 0],
      [2000, 0],
      [2000, 5],
    ]) {
      const calls = [];
      const slowAt = Math.min(n, 1000);
      const table = {
        [workload]: async (opts) => {
          calls.push(opts.n);
          if (opts.n === slowAt && calls.length === 1) await new Promise((done) => setTimeout(done, 300));
          return { result: opts.n };
        },
      };
      const out = await run({ workload, n, iterations: 2, warmupMs }, MAX_WARMUP_RUNS, table);
      assert.equal(out.primed, slowAt);
      assert.equal(calls[0], slowAt, "the priming runs first");
      assert.deepEqual(calls.slice(1), Array(calls.length - 1).fill(n), "then only size-N runs");
      assert.equal(calls.length, 1 + out.warmup_ns.length + 2);
      assert.equal(out.iter_ns.length, 2);
      assert.ok(out.iter_ns.every((ns) => ns < 300e6), `iter_ns ${out.iter_ns}`);
      assert.ok(out.warmup_ns.every((ns) => ns < 300e6), `warmup_ns ${out.warmup_ns}`);
    }
  }
});

it("run: a wrong priming answer is a RunError, before any timed run", async () => {
  let calls = 0;
  const table = {
    chain: async ({ n }) => {
      calls++;
      return { result: n - 1 };
    },
  };
  await assert.rejects(run({ workload: "chain", n: 2000, iterations: 2, warmupMs: 0 }, 3, table), (err) => {
    assert.ok(err instanceof RunError);
    assert.match(err.message, /^the priming chain of 1000 links answered 999, not 1000$/);
    return true;
  });
  assert.equal(calls, 1);
});

// The same source, run as a program by each runtime; Bun and Deno are there
// after `npm ci` (the language's setup step). With gc() exposed and Deno
// allowed to read BENCH_COLLECT, as impls.toml runs them (docs/protocol.md,
// "Collection between passes"; test/collect.test.mjs).
const here = fileURLToPath(new URL("..", import.meta.url));
const runtimes = {
  nodejs: [process.execPath, "--expose-gc"],
  bun: [`${here}node_modules/@oven/bun-linux-x64/bin/bun`],
  deno: [`${here}node_modules/@deno/linux-x64-glibc/deno`, "run", "--v8-flags=--expose-gc", "--no-prompt", "--allow-env=BENCH_COLLECT"],
};

for (const [id, [binary, ...args]] of Object.entries(runtimes)) {
  describe(`bench.mjs on ${id}`, { skip: !existsSync(binary) && `${binary} missing: run npm ci` }, () => {
    const bench = (...argv) =>
      spawnSync(binary, [...args, `${here}bench.mjs`, ...argv], {
        encoding: "utf8",
        env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" },
      });

    it("prints one JSON line per workload", () => {
      const cases = [
        [["sleep", "--n", "100", "--duration-ms", "50", "--iterations", "1"], 100],
        [["chain", "--n", "100", "--iterations", "2"], 100],
        [["chain-await", "--n", "100", "--iterations", "2"], 100],
        [["bounded", "--n", "100", "--buffer", "0", "--iterations", "2"], 4950],
        [["skynet", "--n", "100", "--iterations", "2"], 4950],
      ];
      for (const [argv, expected] of cases) {
        const { status, stdout, stderr } = bench(...argv);
        assert.equal(status, 0, stderr);
        const lines = stdout.trimEnd().split("\n");
        assert.equal(lines.length, 1);
        const out = JSON.parse(lines[0]);
        assert.equal(out.workload, argv[0]);
        assert.equal(out.n, 100);
        assert.equal(out.result, expected);
        assert.ok(out.results.every((r) => r === expected));
        assert.match(out.runtime, /^(Node\.js|Bun|Deno) \d+\.\d+\.\d+/);
        assert.deepEqual(out.warmup_ns, []);
        assert.deepEqual(out.warmup_results, []);
        assert.equal(out.primed, argv[0].startsWith("chain") ? 100 : undefined);
      }
    });

    it("primes chain and chain-await with min(N, 1000) links", () => {
      for (const workload of ["chain", "chain-await"]) {
        for (const n of [5, 2000]) {
          const { status, stdout, stderr } = bench(workload, "--n", String(n), "--iterations", "2");
          assert.equal(status, 0, stderr);
          const out = JSON.parse(stdout);
          assert.equal(out.primed, Math.min(n, 1000));
          assert.deepEqual(out.results, [n, n]);
          assert.equal(out.iter_ns.length, 2);
        }
      }
    });

    it("runs the workload for --warmup-ms W before the iterations", () => {
      const argv = ["bounded", "--n", "1000", "--buffer", "1", "--iterations", "3", "--warmup-ms", "50"];
      const { status, stdout, stderr } = bench(...argv);
      assert.equal(status, 0, stderr);
      assert.equal(stdout.trimEnd().split("\n").length, 1);
      checkWarmup(JSON.parse(stdout), 50, 499500, 3);
    });

    it("exits 2 with one stderr line and nothing on stdout for the protocol's bad input", () => {
      for (const argv of [...badTable("chain"), ...serveBad, ...moreBad.slice(-6), ...warmupBad]) {
        const { status, stdout, stderr } = bench(...argv);
        assert.equal(status, 2, argv.join(" "));
        assert.equal(stdout, "", argv.join(" "));
        assert.match(stderr, /^bench\.mjs: error: [^\n]+\n$/, argv.join(" "));
      }
    });

    it("prints usage on stdout for --help and -h, exit 0", () => {
      for (const flag of ["--help", "-h"]) {
        const { status, stdout, stderr } = bench(flag);
        assert.equal(status, 0);
        assert.match(stdout, /^usage: bench\.mjs WORKLOAD --n N --iterations K/);
        assert.match(stdout, /\n {2}--warmup-ms W {4}\S[^\n]*\n/);
        assert.equal(stderr, "");
      }
    });
  });
}
