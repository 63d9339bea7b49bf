// The five workloads of docs/protocol.md. Each takes the parsed options and
// resolves to { result } (plus spawnNs for sleep); protocol.mjs times the call.
import process from "node:process";
import { setTimeout as sleepMs } from "node:timers/promises";
import { Channel } from "./channel.mjs";

// Monotonic nanoseconds; process.hrtime exists on Node.js, Bun and Deno alike.
export const now = () => process.hrtime.bigint();

// 1M tasks 2024: N timer promises for D ms at once, joined with Promise.all. Each
// resolves to 1, so the join's sum counts the tasks that completed. (An async
// wrapper per task that bumps a counter costs about 70% more memory.)
export async function sleep({ n, durationMs }) {
  const start = now();
  const tasks = new Array(n);
  for (let i = 0; i < n; i++) tasks[i] = sleepMs(durationMs, 1);
  const spawnNs = Number(now() - start);
  let done = 0;
  for (const one of await Promise.all(tasks)) done += one;
  return { result: done, spawnNs };
}

async function relay(input, output) {
  await output.send(1 + (await input.recv()));
}

// Yakunin 2017: N relay tasks linked by N+1 rendezvous channels.
export async function chain({ n }) {
  const first = new Channel();
  let last = first;
  for (let i = 0; i < n; i++) {
    const next = new Channel();
    // Not awaited: the relays run concurrently, their progress is seen on `last`.
    relay(last, next);
    last = next;
  }
  await first.send(0);
  return { result: await last.recv() };
}

async function addOne(input) {
  const x = await input;
  // The article's Task.Yield(): go back through the scheduler (here the microtask
  // queue) once before completing, so each link costs a real hop.
  await undefined;
  return x + 1;
}

// Yakunin 2017's task variant: N async functions, each awaiting its predecessor.
export async function chainAwait({ n }) {
  let start;
  const source = new Promise((resolve) => {
    start = resolve;
  });
  let last = source;
  for (let i = 0; i < n; i++) last = addOne(last);
  start(0);
  return { result: await last };
}

async function produce(channel, i) {
  await channel.send(i);
}

// Go/Rust channels: N producers each send their index once; this async
// function is the consumer. It is a task of the same kind as the producers
// (an async function whose continuations run from the one event loop's
// microtask queue), so a separate consumer async function would be this same
// thing plus a hop: on one thread no consumer code runs before the
// synchronous start loop below returns, wherever the consumer was started.
// The sum stays exact in a double while N(N-1)/2 < 2^53, i.e. N < 1.3e8.
export async function bounded({ n, buffer }) {
  const channel = new Channel(buffer);
  const producers = new Array(n);
  for (let i = 0; i < n; i++) producers[i] = produce(channel, i);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += await channel.recv();
  await Promise.all(producers);
  return { result: sum };
}

// One node of the skynet tree, covering leaves num..num+size-1. Each node is a
// promise, JavaScript's task (the protocol's "an async function's promise"):
// a leaf's already fulfilled, a parent's the one `.then` derives from
// Promise.all of its 10 children, settled with their sum. In JS's model a
// call runs at once, on the caller's stack: nothing is queued to start a
// node, so building the tree is a depth-first descent in one synchronous
// run, and what is scheduled is each parent's settling (Promise.all's, then
// its `.then`'s reaction) through the microtask queue. A parent starts all
// 10 children (calls them) before anything waits, as the protocol asks.
// Written with `.then`, not as an async function awaiting Promise.all: the
// await's resumption of the function's frame cost 1.1-1.3x the time of the
// same tree in promises (node/README.md, skynet), and the protocol asks for
// the runtime's task, not its syntax. The sum stays exact in a double while
// N(N-1)/2 < 2^53 (N <= 10^8; see protocol.mjs).
function skynetNode(num, size) {
  if (size === 1) return Promise.resolve(num);
  const step = size / 10;
  const children = new Array(10);
  for (let k = 0; k < 10; k++) children[k] = skynetNode(num + k * step, step);
  return Promise.all(children).then(sumOf);
}

function sumOf(values) {
  let sum = 0;
  for (let k = 0; k < values.length; k++) sum += values[k];
  return sum;
}

// The skynet benchmark: the root node covers all N leaves.
export async function skynet({ n }) {
  return { result: await skynetNode(0, n) };
}

export const workloads = { sleep, chain, "chain-await": chainAwait, bounded, skynet };
