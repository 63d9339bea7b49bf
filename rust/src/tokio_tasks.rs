//! `rust-tokio`: every task is a real `tokio::spawn` on the multi-thread
//! runtime, channels are `tokio::sync::mpsc`. The main task is the future
//! given to `block_on` (on the main thread, outside the worker pool): it
//! spawns and waits; for `chain` it also sends the first value and reads
//! the last.

use std::mem;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use crate::protocol::{Implementation, Sample, Work};

pub const LABEL: &str = concat!(
    "tokio ",
    env!("TOKIO_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

/// The program of `rust-tokio` and `rust-tokio-glibc` (the same code, two
/// binaries that differ only by their global allocator): parse, build the
/// runtime, run the iterations, print the JSON line.
pub fn main(implementation: &Implementation) {
    let args = implementation.parse_args();
    let rt = runtime();
    implementation.run(&args, |args| {
        Ok(match args.work {
            Work::Sleep { duration } => sleep(&rt, args.n, duration),
            Work::Chain => chain(&rt, args.n),
            Work::Bounded { capacity, .. } => bounded(&rt, args.n, capacity),
            Work::Skynet => skynet(&rt, args.n),
        })
    });
}

/// The multi-thread runtime (one worker per core), built before any clock
/// starts.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("the tokio runtime starts")
}

/// N spawned tasks each sleep `duration`; the main task awaits every
/// JoinHandle.
pub fn sleep(rt: &Runtime, n: usize, duration: Duration) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n)
            .map(|_| tokio::spawn(tokio::time::sleep(duration)))
            .collect();
        let spawned = start.elapsed();
        let mut done = 0;
        for task in tasks {
            task.await.expect("a sleep task panicked");
            done += 1;
        }
        Sample {
            result: done,
            elapsed: start.elapsed(),
            spawn: Some(spawned),
        }
    })
}

/// N relay tasks linked by N+1 channels of capacity 1 (mpsc has no
/// rendezvous channel).
pub fn chain(rt: &Runtime, n: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let (first, mut last) = mpsc::channel(1);
        for _ in 0..n {
            let (output, next) = mpsc::channel(1);
            tokio::spawn(relay(mem::replace(&mut last, next), output));
        }
        first.send(0).await.expect("the chain is intact");
        let result = last.recv().await.expect("the chain is intact");
        Sample {
            result,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

async fn relay(mut input: mpsc::Receiver<u64>, output: mpsc::Sender<u64>) {
    let x = input.recv().await.expect("the previous link sends");
    output.send(x + 1).await.expect("the next link receives");
}

/// N producer tasks send their index into one channel of `capacity`; a
/// consumer task, spawned first, sums what arrives until the channel closes.
/// The channel closes when the last producer drops its sender, i.e. once
/// every producer has finished, so the consumer's sum means all N have sent
/// and finished; the main task only awaits the consumer. The consumer is a
/// spawned task like the producers, on a worker: a consumer on the
/// `block_on` future (the main thread, outside the worker pool) would make
/// every hand-off a wake-up across threads.
pub fn bounded(rt: &Runtime, n: usize, capacity: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let (tx, mut rx) = mpsc::channel::<u64>(capacity);
        let consumer = tokio::spawn(async move {
            let mut sum = 0;
            while let Some(i) = rx.recv().await {
                sum += i;
            }
            sum
        });
        for i in 0..n as u64 {
            let tx = tx.clone();
            tokio::spawn(async move { tx.send(i).await.expect("the consumer receives") });
        }
        drop(tx);
        let sum = consumer.await.expect("the consumer finishes");
        Sample {
            result: sum,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

/// The skynet tree over leaves `0..n` (n a power of ten): the root is a
/// spawned task like every node, the main task (the `block_on` future) only
/// awaits its JoinHandle.
pub fn skynet(rt: &Runtime, n: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let sum = tokio::spawn(node(0, n as u64))
            .await
            .expect("the root finishes");
        Sample {
            result: sum,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

/// One node: a leaf returns its index; a node of size > 1 spawns its 10
/// children, then awaits their JoinHandles in order and returns the sum.
/// The named `impl Future + Send` return type is what lets the async block
/// spawn itself without a `Box::pin`: `tokio::spawn` needs the child future
/// to be `Send`, which the signature promises, so the compiler need not look
/// into the very body it is checking (as an `async fn`, rustc 1.95 says
/// "cannot satisfy `impl Future<Output = u64>: Send`").
/// Each node is then one allocation, tokio's task cell, with no boxed future
/// inside it.
#[allow(clippy::manual_async_fn)] // as an async fn it could not spawn itself
fn node(num: u64, size: u64) -> impl Future<Output = u64> + Send {
    async move {
        if size == 1 {
            return num;
        }
        let step = size / 10;
        let children: [_; 10] =
            std::array::from_fn(|k| tokio::spawn(node(num + k as u64 * step, step)));
        let mut sum = 0;
        for child in children {
            sum += child.await.expect("a child finishes");
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_completes_every_task_after_the_duration() {
        let sample = sleep(&runtime(), 1000, Duration::from_millis(20));
        assert_eq!(sample.result, 1000);
        assert!(sample.elapsed >= Duration::from_millis(20));
    }

    #[test]
    fn chain_adds_one_per_link() {
        assert_eq!(chain(&runtime(), 1000).result, 1000);
    }

    #[test]
    fn bounded_sums_every_index() {
        let rt = runtime();
        for capacity in [1, 10, 1000] {
            assert_eq!(bounded(&rt, 1000, capacity).result, 999 * 1000 / 2);
        }
    }

    #[test]
    fn skynet_sums_every_leaf() {
        let rt = runtime();
        for n in [1, 10, 100, 10_000] {
            assert_eq!(skynet(&rt, n).result, (n * (n - 1) / 2) as u64);
        }
    }
}
