//! `rust-tokio`: every task is a real `tokio::spawn` on the multi-thread
//! runtime, channels are `tokio::sync::mpsc`. The main task is the future
//! given to `block_on` (on the main thread, outside the worker pool): it
//! spawns and waits; for `chain` it also sends the first value and reads
//! the last.

use std::mem;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use crate::protocol::Sample;

pub const LABEL: &str = concat!(
    "tokio ",
    env!("TOKIO_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

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
}
