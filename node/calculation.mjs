// The article's CalculationService for `bench.mjs serve` (docs/protocol.md,
// "The HTTP server"): two simulated remote calls, "double" taking 2·D ms and
// "halve" D ms, each in a blocking and a non-blocking form. Imported by the
// main thread (server.mjs) and by the pool's workers (pool-worker.mjs).
import process from "node:process";
import { setTimeout as sleepMs } from "node:timers/promises";

const now = () => process.hrtime.bigint();
const msSince = (end) => Number(end - now()) / 1e6;

// A private cell that nobody ever notifies: Atomics.wait on it can only time out.
const neverNotified = new Int32Array(new SharedArrayBuffer(4));

// Blocks the calling thread (its event loop included) for at least ms
// milliseconds: Atomics.wait parks the OS thread on a futex, it does not
// spin. The loop covers a wait that returns before the monotonic clock has
// moved ms on.
export function block(ms) {
  const end = now() + BigInt(ms) * 1_000_000n;
  for (let left = ms; left > 0; left = msSince(end)) Atomics.wait(neverNotified, 0, 0, left);
}

// Resolves after at least ms milliseconds without blocking: a timer promise.
// Node.js compares timers against libuv's loop clock, cached and truncated to
// whole milliseconds, so a timer can fire up to about 1 ms before ms have
// passed on the monotonic clock (4 of 200 20-ms timers here); the loop then
// waits out the remainder, so a simulated call never answers faster than its
// delay. The timer is unref'd: it fires while the server keeps the event loop
// alive, and does not hold the process open once the server has closed.
export async function delay(ms) {
  const end = now() + BigInt(ms) * 1_000_000n;
  for (let left = ms; left > 0; left = msSince(end)) await sleepMs(Math.ceil(left), undefined, { ref: false });
}

// NUM < 2^31, so 2*NUM and the sum stay exact in a double.
export class Calculation {
  constructor(delayMs) {
    this.delayMs = delayMs;
  }

  double(num) {
    block(2 * this.delayMs);
    return num * 2;
  }

  halve(num) {
    block(this.delayMs);
    return Math.floor(num / 2);
  }

  async doubleAsync(num) {
    await delay(2 * this.delayMs);
    return num * 2;
  }

  async halveAsync(num) {
    await delay(this.delayMs);
    return Math.floor(num / 2);
  }
}
