//! `rust-smol`: every task is spawned on a smol `Executor` run by one thread
//! per core, channels are smol's bounded channels (async-channel). smol's
//! own global executor (`smol::spawn`) is meant for tests and small programs
//! and runs on one thread unless SMOL_THREADS says otherwise, so this is
//! smol's documented multi-threaded set-up instead: a static `Executor`,
//! each executor thread blocked in `smol::block_on(EXECUTOR.run(pending))`.
//! The main task is the future given to `smol::block_on` on the main thread,
//! outside those threads (as tokio's `block_on`): it spawns and waits; for
//! `chain` it also sends the first value and reads the last.

use std::future;
use std::mem;
use std::num::NonZeroUsize;
use std::thread;
use std::time::{Duration, Instant};

use smol::channel::{self, Receiver, Sender};
use smol::{Executor, Timer};

use crate::protocol::Sample;

pub const LABEL: &str = concat!(
    "smol ",
    env!("SMOL_VERSION"),
    ", async-executor ",
    env!("ASYNC_EXECUTOR_VERSION"),
    ", async-io ",
    env!("ASYNC_IO_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

static EXECUTOR: Executor<'static> = Executor::new();

/// Starts one executor thread per core (they live until the process exits),
/// then spawns one 1 ms timer task and waits for it, so that the executor's
/// state and async-io's timer reactor, both created lazily, exist before any
/// clock starts.
pub fn start_runtime() {
    let threads = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    for i in 0..threads {
        thread::Builder::new()
            .name(format!("smol-{i}"))
            .spawn(|| smol::block_on(EXECUTOR.run(future::pending::<()>())))
            .expect("the executor threads start");
    }
    smol::block_on(EXECUTOR.spawn(Timer::after(Duration::from_millis(1))));
}

/// N spawned tasks each sleep `duration` (a `Timer`, whose deadline is set
/// when it is created); the main task awaits every task handle (dropping a
/// smol `Task` would cancel it).
pub fn sleep(n: usize, duration: Duration) -> Sample {
    smol::block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n)
            .map(|_| EXECUTOR.spawn(Timer::after(duration)))
            .collect();
        let spawned = start.elapsed();
        let mut done = 0;
        for task in tasks {
            task.await;
            done += 1;
        }
        Sample {
            result: done,
            elapsed: start.elapsed(),
            spawn: Some(spawned),
        }
    })
}

/// N relay tasks linked by N+1 channels of capacity 1 (async-channel has no
/// rendezvous mode: `bounded(0)` panics).
pub fn chain(n: usize) -> Sample {
    smol::block_on(async {
        let start = Instant::now();
        let (first, mut last) = channel::bounded(1);
        for _ in 0..n {
            let (output, next) = channel::bounded(1);
            EXECUTOR
                .spawn(relay(mem::replace(&mut last, next), output))
                .detach();
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
/// producer has finished. The main task only awaits the consumer.
pub fn bounded(n: usize, capacity: usize) -> Sample {
    smol::block_on(async {
        let start = Instant::now();
        let (tx, rx) = channel::bounded::<u64>(capacity);
        let consumer = EXECUTOR.spawn(async move {
            let mut sum = 0;
            while let Ok(i) = rx.recv().await {
                sum += i;
            }
            sum
        });
        for i in 0..n as u64 {
            let tx = tx.clone();
            EXECUTOR
                .spawn(async move { tx.send(i).await.expect("the consumer receives") })
                .detach();
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
/// spawned task like every node, the main task (the `smol::block_on`
/// future) only awaits its `Task`.
pub fn skynet(n: usize) -> Sample {
    smol::block_on(async {
        let start = Instant::now();
        let sum = EXECUTOR.spawn(node(0, n as u64)).await;
        Sample {
            result: sum,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

/// One node: a leaf returns its index; a node of size > 1 spawns its 10
/// children, then awaits their `Task`s in order and returns the sum.
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
            std::array::from_fn(|k| EXECUTOR.spawn(node(num + k as u64 * step, step)));
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
    use std::sync::Once;

    fn start() {
        static START: Once = Once::new();
        START.call_once(start_runtime);
    }

    #[test]
    fn sleep_completes_every_task_after_the_duration() {
        start();
        let sample = sleep(1000, Duration::from_millis(20));
        assert_eq!(sample.result, 1000);
        assert!(sample.elapsed >= Duration::from_millis(20));
    }

    #[test]
    fn chain_adds_one_per_link() {
        start();
        assert_eq!(chain(1000).result, 1000);
    }

    #[test]
    fn bounded_sums_every_index() {
        start();
        for capacity in [1, 10, 1000] {
            assert_eq!(bounded(1000, capacity).result, 999 * 1000 / 2);
        }
    }

    #[test]
    fn skynet_sums_every_leaf() {
        start();
        for n in [1, 10, 100, 10_000] {
            assert_eq!(skynet(n).result, (n * (n - 1) / 2) as u64);
        }
    }
}
