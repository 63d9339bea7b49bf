// The worker pool of `bench.mjs serve`: T worker_threads, each with its own
// event loop, that run the article's calls for the styles that block the
// main thread on work done elsewhere (parallel, sync-over-async). The main
// thread posts a job, then blocks in Atomics.wait until the worker stores the
// result in shared memory: it cannot take a reply by postMessage, since its
// event loop is the thing that is blocked.
import { Worker } from "node:worker_threads";

// One job slot per call in flight. Only a handler that blocks the main thread
// uses the pool, and it waits for all its jobs before returning, so no more
// than two (parallel's double and halve) are ever in flight at once.
export const SLOTS = 2;
export const PENDING = 0;
export const DONE = 1;
export const FAILED = 2;

// A slot's state (Int32Array, for Atomics.wait) and value (a double: results
// reach 2^32). The worker writes the value, then Atomics.store()s the state:
// a main thread that Atomics.load()s DONE also sees the value.
export function slots(shared) {
  const valuesOffset = 8 * Math.ceil((4 * SLOTS) / 8);
  return { states: new Int32Array(shared, 0, SLOTS), values: new Float64Array(shared, valuesOffset, SLOTS) };
}
const sharedBytes = () => 8 * Math.ceil((4 * SLOTS) / 8) + 8 * SLOTS;

export class Pool {
  // Starts size workers and resolves once each has loaded its module.
  static async start(size, delayMs) {
    const shared = new SharedArrayBuffer(sharedBytes());
    const url = new URL("./pool-worker.mjs", import.meta.url);
    const workers = [];
    try {
      for (let i = 0; i < size; i++) workers.push(new Worker(url, { workerData: { shared, delayMs } }));
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise((resolve, reject) => {
              worker.once("message", resolve);
              worker.once("error", reject);
              worker.once("exit", (code) => reject(new Error(`a pool worker exited (${code}) before it was ready`)));
            }),
        ),
      );
    } catch (err) {
      await Promise.allSettled(workers.map((worker) => worker.terminate()));
      throw err;
    }
    return new Pool(workers, shared);
  }

  constructor(workers, shared) {
    this.workers = workers;
    ({ states: this.states, values: this.values } = slots(shared));
    this.free = Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i);
    this.next = 0;
    this.failure = null;
    for (const worker of workers) {
      worker.on("error", (err) => {
        this.failure ??= err;
      });
    }
  }

  get size() {
    return this.workers.length;
  }

  // Posts calculation[method](num) to the next worker (round robin, so two
  // jobs in a row go to two workers when size >= 2) and returns its slot.
  start(method, num) {
    if (this.failure) throw new Error(`the worker pool is broken: ${this.failure.message}`);
    const slot = this.free.pop();
    if (slot === undefined) throw new Error(`more than ${SLOTS} pool jobs in flight`);
    Atomics.store(this.states, slot, PENDING);
    this.workers[this.next].postMessage({ method, num, slot });
    this.next = (this.next + 1) % this.workers.length;
    return slot;
  }

  // Blocks the calling thread until the slot's job is done; returns its value.
  result(slot) {
    while (Atomics.load(this.states, slot) === PENDING) Atomics.wait(this.states, slot, PENDING);
    const state = Atomics.load(this.states, slot);
    const value = this.values[slot];
    this.free.push(slot);
    if (state !== DONE) throw new Error("a pool job failed");
    return value;
  }

  close() {
    return Promise.allSettled(this.workers.map((worker) => worker.terminate()));
  }
}
