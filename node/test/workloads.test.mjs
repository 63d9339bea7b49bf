import assert from "node:assert/strict";
import { it } from "node:test";
import { bounded, chain, chainAwait, skynet, sleep } from "../workloads.mjs";

it("sleep: every task completes, concurrently", async () => {
  const start = performance.now();
  const { result, spawnNs } = await sleep({ n: 1000, durationMs: 100 });
  const elapsed = performance.now() - start;
  assert.equal(result, 1000);
  assert.ok(spawnNs > 0);
  // Serial sleeps would take 100 s: these overlapped.
  assert.ok(elapsed >= 100 && elapsed < 100 + 5000, `took ${elapsed} ms`);
});

it("chain: the value crosses n relays", async () => {
  for (const n of [1, 2, 1000, 10_000]) {
    assert.deepEqual(await chain({ n }), { result: n });
  }
});

it("chain-await: the value crosses n awaiting tasks", async () => {
  for (const n of [1, 2, 1000, 10_000]) {
    assert.deepEqual(await chainAwait({ n }), { result: n });
  }
});

it("bounded: the consumer sums every index, for rendezvous and buffered channels", async () => {
  for (const n of [1, 10, 5000]) {
    for (const buffer of [0, 1, 10, n, 2 * n]) {
      assert.deepEqual(await bounded({ n, buffer }), { result: (n * (n - 1)) / 2 }, `n=${n} buffer=${buffer}`);
    }
  }
});

it("skynet: the tree sums every leaf index", async () => {
  for (const n of [1, 10, 100, 100_000]) {
    assert.deepEqual(await skynet({ n }), { result: (n * (n - 1)) / 2 }, `n=${n}`);
  }
});
