import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseArgs, run, UsageError } from "../protocol.mjs";

describe("parseArgs", () => {
  it("applies the protocol's defaults", () => {
    assert.deepEqual(parseArgs(["bounded", "--n", "5"]), {
      workload: "bounded",
      n: 5,
      buffer: 1,
      durationMs: 10000,
      iterations: 10,
    });
    assert.equal(parseArgs(["sleep", "--n", "5"]).iterations, 1);
    assert.equal(parseArgs(["chain", "--n", "5"]).iterations, 2);
    assert.equal(parseArgs(["chain-await", "--n", "5"]).iterations, 2);
  });

  it("reads --opt value and --opt=value", () => {
    const opts = parseArgs(["bounded", "--n=3", "--buffer", "0", "--iterations=4", "--duration-ms", "7"]);
    assert.deepEqual(opts, { workload: "bounded", n: 3, buffer: 0, durationMs: 7, iterations: 4 });
  });

  it("rejects bad arguments with a one-line message", () => {
    const bad = [
      [],
      ["nap", "--n", "1"],
      ["chain"],
      ["chain", "--n"],
      ["chain", "--n", "0"],
      ["chain", "--n", "-1"],
      ["chain", "--n", "1.5"],
      ["chain", "--n", "1e3"],
      ["chain", "--n", ""],
      ["chain", "--n", "99999999999999999999"],
      ["chain", "--n", "1", "--verbose"],
      ["chain", "--n", "1", "extra"],
      ["bounded", "--n", "1", "--buffer", "-1"],
      ["sleep", "--n", "1", "--duration-ms", "0"],
      ["chain", "--n", "1", "--iterations", "0"],
    ];
    for (const argv of bad) {
      assert.throws(() => parseArgs(argv), (err) => err instanceof UsageError && !err.message.includes("\n"), argv.join(" "));
    }
  });
});

it("run: K iterations, echoed request, buffer only for bounded", async () => {
  const out = await run({ workload: "bounded", n: 4, buffer: 0, durationMs: 1, iterations: 3 });
  assert.equal(out.buffer, 0);
  assert.deepEqual(out.results, [6, 6, 6]);
  assert.equal(out.result, 6);
  assert.equal(out.iter_ns.length, 3);
  assert.ok(out.iter_ns.every((ns) => Number.isInteger(ns) && ns > 0));
  assert.equal(out.spawn_ns, undefined);

  const slept = await run({ workload: "sleep", n: 10, buffer: 1, durationMs: 20, iterations: 1 });
  assert.equal(slept.buffer, null);
  assert.ok(slept.iter_ns[0] >= 20e6);
  assert.ok(Number.isInteger(slept.spawn_ns));
});

// The same source, run as a program by each runtime; Bun and Deno are there
// after `npm ci` (the language's setup step).
const here = fileURLToPath(new URL("..", import.meta.url));
const runtimes = {
  nodejs: [process.execPath],
  bun: [`${here}node_modules/@oven/bun-linux-x64/bin/bun`],
  deno: [`${here}node_modules/@deno/linux-x64-glibc/deno`, "run", "--no-prompt"],
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
        [["sleep", "--n", "100", "--duration-ms", "50"], 100],
        [["chain", "--n", "100"], 100],
        [["chain-await", "--n", "100"], 100],
        [["bounded", "--n", "100", "--buffer", "0", "--iterations", "2"], 4950],
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
      }
    });

    it("exits 2 with one stderr line on bad arguments", () => {
      const { status, stdout, stderr } = bench("chain", "--n", "0");
      assert.equal(status, 2);
      assert.equal(stdout, "");
      assert.match(stderr, /^bench: [^\n]+\n$/);
    });
  });
}
