//! `rust-futures`: seed 002's Rust program. N `tokio::time::sleep` futures
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

/// Creates N sleep futures (each takes its deadline on creation, so
/// `spawn` is the creation loop) and awaits them together.
pub fn sleep(rt: &Runtime, n: usize, duration: Duration) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let sleeps: Vec<_> = (0..n).map(|_| tokio::time::sleep(duration)).collect();
        let created = start.elapsed();
        let done = join_all(sleeps).await.len() as u64;
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
