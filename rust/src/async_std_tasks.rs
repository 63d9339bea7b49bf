//! `rust-async-std`: every task is an `async_std::task::spawn` on the global
//! executor, channels are async-std's bounded channels; the workloads are
//! `tasks`'.

use std::time::Duration;

use async_std::channel;
use async_std::task::{self, JoinHandle};

use crate::tasks::Job;
use crate::tasks::{TaskRuntime, async_channel_ends};

pub const LABEL: &str = concat!(
    "async-std ",
    env!("ASYNC_STD_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

/// The global executor: nothing to hold.
pub struct AsyncStd;

impl TaskRuntime for AsyncStd {
    type Handle<T: Send + 'static> = JoinHandle<T>;

    /// async-std starts its executor threads and timer reactor lazily, on
    /// the first spawn and sleep: do both once so no clock pays for it.
    fn start() -> Self {
        task::block_on(task::spawn(task::sleep(Duration::from_millis(1))));
        AsyncStd
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        task::block_on(future)
    }

    fn spawn<F: Job>(future: F) -> JoinHandle<F::Output> {
        task::spawn(future)
    }

    /// Dropping the `JoinHandle` detaches the task.
    fn spawn_detached(future: impl Job<Output = ()>) {
        task::spawn(future);
    }

    fn sleep(duration: Duration) -> impl Job {
        task::sleep(duration)
    }

    async_channel_ends!(channel);
}
