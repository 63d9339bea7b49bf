//! `rust-async-std`: every task is an `async_std::task::spawn` on the global
//! executor, channels are async-std's bounded channels. The main task is the
//! future given to `task::block_on`: it spawns and waits; for `chain` it also
//! sends the first value and reads the last.

use std::mem;
use std::time::{Duration, Instant};

use async_std::channel::{self, Receiver, Sender};
use async_std::task;

use crate::protocol::Sample;

pub const LABEL: &str = concat!(
    "async-std ",
    env!("ASYNC_STD_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

/// async-std starts its executor threads and timer reactor lazily, on the
/// first spawn and sleep: do both once so no clock pays for it.
pub fn start_runtime() {
    task::block_on(task::spawn(task::sleep(Duration::from_millis(1))));
}

/// N spawned tasks each sleep `duration`; the main task awaits every
/// JoinHandle.
pub fn sleep(n: usize, duration: Duration) -> Sample {
    task::block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n).map(|_| task::spawn(task::sleep(duration))).collect();
        let spawned = start.elapsed();
        let mut done = 0;
        for t in tasks {
            t.await;
            done += 1;
        }
        Sample {
            result: done,
            elapsed: start.elapsed(),
            spawn: Some(spawned),
        }
    })
}

/// N relay tasks linked by N+1 channels of capacity 1 (async-std's bounded
/// channels have no rendezvous mode).
pub fn chain(n: usize) -> Sample {
    task::block_on(async {
        let start = Instant::now();
        let (first, mut last) = channel::bounded(1);
        for _ in 0..n {
            let (output, next) = channel::bounded(1);
            task::spawn(relay(mem::replace(&mut last, next), output));
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

async fn relay(input: Receiver<u64>, output: Sender<u64>) {
    let x = input.recv().await.expect("the previous link sends");
    output.send(x + 1).await.expect("the next link receives");
}

/// N producer tasks send their index into one channel of `capacity`; a
/// consumer task, spawned first, sums what arrives until the channel closes,
/// which happens when the last producer drops its sender, i.e. once every
/// producer has finished. The main task (the `block_on` future, on the main
/// thread, outside the executor's threads) only awaits the consumer.
pub fn bounded(n: usize, capacity: usize) -> Sample {
    task::block_on(async {
        let start = Instant::now();
        let (tx, rx) = channel::bounded::<u64>(capacity);
        let consumer = task::spawn(async move {
            let mut sum = 0;
            while let Ok(i) = rx.recv().await {
                sum += i;
            }
            sum
        });
        for i in 0..n as u64 {
            let tx = tx.clone();
            // Dropping the JoinHandle detaches the task.
            task::spawn(async move { tx.send(i).await.expect("the consumer receives") });
        }
        drop(tx);
        let sum = consumer.await;
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
pub fn skynet(n: usize) -> Sample {
    task::block_on(async {
        let start = Instant::now();
        let sum = task::spawn(node(0, n as u64)).await;
        Sample {
            result: sum,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

/// One node: a leaf returns its index; a node of size > 1 spawns its 10
/// children, then awaits their JoinHandles in order and returns the sum.
/// (The named `impl Future + Send` return type is what lets the async block
/// spawn itself without a `Box::pin`: see README.md.)
#[allow(clippy::manual_async_fn)] // as an async fn it could not spawn itself
fn node(num: u64, size: u64) -> impl Future<Output = u64> + Send {
    async move {
        if size == 1 {
            return num;
        }
        let step = size / 10;
        let children: [_; 10] =
            std::array::from_fn(|k| task::spawn(node(num + k as u64 * step, step)));
        let mut sum = 0;
        for child in children {
            sum += child.await;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_completes_every_task_after_the_duration() {
        start_runtime();
        let sample = sleep(1000, Duration::from_millis(20));
        assert_eq!(sample.result, 1000);
        assert!(sample.elapsed >= Duration::from_millis(20));
    }

    #[test]
    fn chain_adds_one_per_link() {
        assert_eq!(chain(1000).result, 1000);
    }

    #[test]
    fn bounded_sums_every_index() {
        for capacity in [1, 10, 1000] {
            assert_eq!(bounded(1000, capacity).result, 999 * 1000 / 2);
        }
    }

    #[test]
    fn skynet_sums_every_leaf() {
        for n in [1, 10, 100, 10_000] {
            assert_eq!(skynet(n).result, (n * (n - 1) / 2) as u64);
        }
    }
}
