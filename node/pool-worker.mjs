// A thread of the serve pool (pool.mjs). Jobs arrive by postMessage; results
// go back through shared memory, where the blocked main thread waits on them.
//   double, halve:            the blocking calls (parallel), which block this
//                             worker's event loop for their delay;
//   doubleAsync, halveAsync:  the non-blocking calls (sync-over-async), run
//                             on this worker's event loop, the place where a
//                             promise can settle while the main thread blocks.
import { parentPort, workerData } from "node:worker_threads";
import { Calculation } from "./calculation.mjs";
import { DONE, FAILED, slots } from "./pool.mjs";

const { states, values } = slots(workerData.shared);
const calculation = new Calculation(workerData.delayMs);
const BLOCKING = new Set(["double", "halve"]);
const ASYNC = new Set(["doubleAsync", "halveAsync"]);

parentPort.on("message", async ({ method, num, slot }) => {
  let state = DONE;
  try {
    if (BLOCKING.has(method)) values[slot] = calculation[method](num);
    else if (ASYNC.has(method)) values[slot] = await calculation[method](num);
    else throw new Error(`unknown method ${method}`);
  } catch {
    state = FAILED;
  }
  Atomics.store(states, slot, state);
  Atomics.notify(states, slot);
});

parentPort.postMessage("ready");
