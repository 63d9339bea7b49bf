//! `rust-futures`: 1M tasks 2024's Rust program. N `tokio::time::sleep` futures
//! are driven by `futures::future::join_all` inside ONE task (the main
//! future of the tokio runtime): the runtime sees a single task, so this
//! measures futures, not spawned tasks.

use std::time::{Duration, Instant};

use futures::future::join_all;
use tokio::runtime::Runtime;

use crate::protocol::Sample;

pub const LABEL: &str = concat!(
    "tokio ",
    env!("TOKIO_VERSION"),
    " + futures ",
    env!("FUTURES_VERSION"),
    " join_all in one task, rustc ",
    env!("RUSTC_VERSION")
);

/// Creates N sleep futures and awaits them together. Each takes its deadline
/// on creation, so `spawn` is the time `join_all` took to build its set.
/// The futures go straight from the iterator into `join_all`'s own storage:
/// collecting them into a Vec first would hold every future twice at the
/// peak (112 bytes each, tokio 1.54).
pub fn sleep(rt: &Runtime, n: usize, duration: Duration) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let all = join_all((0..n).map(|_| tokio::time::sleep(duration)));
        let created = start.elapsed();
        let done = all.await.len() as u64;
        Sample {
            result: done,
            elapsed: start.elapsed(),
            spawn: Some(created),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokio_tasks::runtime;

    #[test]
    fn sleep_completes_every_future_after_the_duration() {
        let sample = sleep(&runtime(), 1000, Duration::from_millis(20));
        assert_eq!(sample.result, 1000);
        assert!(sample.elapsed >= Duration::from_millis(20));
    }
}
