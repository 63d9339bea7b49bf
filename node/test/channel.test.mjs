import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as macrotask } from "node:timers/promises";
import { Channel } from "../channel.mjs";

// Tracks whether a promise has settled; read it after `await macrotask()`,
// which lets every pending microtask run first.
function track(promise) {
  const state = { settled: false, value: undefined };
  promise.then((value) => Object.assign(state, { settled: true, value }));
  return state;
}

describe("Channel(0), a rendezvous", () => {
  it("parks a sender until a receiver takes the value", async () => {
    const ch = new Channel();
    const sent = track(ch.send("a"));
    await macrotask();
    assert.equal(sent.settled, false);
    assert.equal(await ch.recv(), "a");
    await macrotask();
    assert.equal(sent.settled, true);
  });

  it("parks a receiver until a sender arrives, and the send completes at once", async () => {
    const ch = new Channel();
    const received = track(ch.recv());
    await macrotask();
    assert.equal(received.settled, false);
    const sent = track(ch.send(7));
    await macrotask();
    assert.deepEqual(received, { settled: true, value: 7 });
    assert.equal(sent.settled, true);
  });

  it("serves parked senders and receivers in arrival order", async () => {
    const ch = new Channel();
    ch.send(1);
    ch.send(2);
    ch.send(3);
    assert.deepEqual([await ch.recv(), await ch.recv(), await ch.recv()], [1, 2, 3]);
    const receivers = [ch.recv(), ch.recv()];
    await ch.send("x");
    await ch.send("y");
    assert.deepEqual(await Promise.all(receivers), ["x", "y"]);
  });

  it("carries undefined and null like any value", async () => {
    const ch = new Channel();
    ch.send(undefined);
    ch.send(null);
    assert.equal(await ch.recv(), undefined);
    assert.equal(await ch.recv(), null);
  });

  it("never buffers", () => {
    const ch = new Channel(0);
    ch.send(1);
    assert.equal(ch.length, 0);
    assert.equal(ch.capacity, 0);
  });
});

describe("Channel(capacity > 0)", () => {
  it("completes sends at once until the buffer is full, then parks", async () => {
    const ch = new Channel(2);
    const sends = [1, 2, 3].map((v) => track(ch.send(v)));
    await macrotask();
    assert.deepEqual(sends.map((s) => s.settled), [true, true, false]);
    assert.equal(ch.length, 2);
    assert.equal(await ch.recv(), 1);
    await macrotask();
    // The freed slot went to the parked sender.
    assert.equal(sends[2].settled, true);
    assert.equal(ch.length, 2);
    assert.deepEqual([await ch.recv(), await ch.recv()], [2, 3]);
    assert.equal(ch.length, 0);
  });

  it("hands a value straight to a parked receiver", async () => {
    const ch = new Channel(1);
    const received = ch.recv();
    await ch.send("v");
    assert.equal(ch.length, 0);
    assert.equal(await received, "v");
  });

  it("keeps FIFO order through many parked senders", async () => {
    // Past the queue's compaction threshold, with senders parked behind a full buffer.
    const n = 20_000;
    for (const capacity of [0, 1, 7, n]) {
      const ch = new Channel(capacity);
      const sends = Array.from({ length: n }, (_, i) => ch.send(i));
      const got = [];
      for (let i = 0; i < n; i++) got.push(await ch.recv());
      await Promise.all(sends);
      assert.deepEqual(got, Array.from({ length: n }, (_, i) => i), `capacity ${capacity}`);
    }
  });

  it("works with concurrent producers and consumers", async () => {
    const ch = new Channel(3);
    const produce = async (base) => {
      for (let i = 0; i < 100; i++) await ch.send(base + i);
    };
    let sum = 0;
    const consume = async () => {
      for (let i = 0; i < 200; i++) {
        const value = await ch.recv(); // not `sum += await`: that reads sum before waiting
        sum += value;
      }
    };
    await Promise.all([produce(0), produce(1000), produce(2000), produce(3000), consume(), consume()]);
    assert.equal(sum, 4 * 4950 + 100 * (0 + 1000 + 2000 + 3000));
  });
});

it("rejects a capacity that is not an integer >= 0", () => {
  for (const bad of [-1, 1.5, NaN, "2", Infinity]) {
    assert.throws(() => new Channel(bad), RangeError);
  }
});
