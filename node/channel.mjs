// A Go-style channel for async tasks sharing one event loop.
//
// send() settles once its value has been handed to a receiver (capacity 0, a
// rendezvous) or placed in the buffer (capacity > 0); recv() settles with the
// next value in FIFO order. Parked senders and receivers are served in the
// order they arrived. There is no close(): the benchmarks never need one.
//
// Memory matters more than elegance here: a chain run holds a million
// channels, each with a parked receiver. So parked operations form an
// intrusive linked list of small nodes (no per-channel array), and the
// buffer exists only when capacity > 0.

// A FIFO of buffered values with O(1) shift: Array#shift copies the whole
// backing store once an array is large.
class Queue {
  #items = [];
  #head = 0;

  get length() {
    return this.#items.length - this.#head;
  }

  push(item) {
    this.#items.push(item);
  }

  shift() {
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#head = 0;
    } else if (this.#head >= 4096 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

// Sends that complete at once share one settled promise.
const SENT = Promise.resolve();

export class Channel {
  #capacity;
  #buffer;
  // Parked operations: senders (buffer full) or receivers (buffer empty),
  // never both at once. Nodes are { value, resolve, next }.
  #head = null;
  #tail = null;
  #sendersParked = false;

  constructor(capacity = 0) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) {
      throw new RangeError(`channel capacity must be an integer >= 0, got ${capacity}`);
    }
    this.#capacity = capacity;
    this.#buffer = capacity > 0 ? new Queue() : null;
  }

  get capacity() {
    return this.#capacity;
  }

  // Values buffered and not yet received.
  get length() {
    return this.#buffer?.length ?? 0;
  }

  send(value) {
    if (this.#head !== null && !this.#sendersParked) {
      this.#unpark().resolve(value);
      return SENT;
    }
    if (this.#buffer !== null && this.#buffer.length < this.#capacity) {
      this.#buffer.push(value);
      return SENT;
    }
    return new Promise((resolve) => this.#park(true, value, resolve));
  }

  recv() {
    if (this.#buffer !== null && this.#buffer.length > 0) {
      const value = this.#buffer.shift();
      // A slot came free: the longest-parked sender's value takes it.
      if (this.#head !== null) {
        const sender = this.#unpark();
        this.#buffer.push(sender.value);
        sender.resolve();
      }
      return Promise.resolve(value);
    }
    if (this.#head !== null && this.#sendersParked) {
      const sender = this.#unpark();
      sender.resolve();
      return Promise.resolve(sender.value);
    }
    return new Promise((resolve) => this.#park(false, undefined, resolve));
  }

  #park(sender, value, resolve) {
    const node = { value, resolve, next: null };
    if (this.#tail === null) {
      this.#head = node;
      this.#sendersParked = sender;
    } else {
      this.#tail.next = node;
    }
    this.#tail = node;
  }

  #unpark() {
    const node = this.#head;
    this.#head = node.next;
    if (this.#head === null) this.#tail = null;
    return node;
  }
}
