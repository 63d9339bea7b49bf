//! `rust-smol`: every task is spawned on a smol `Executor` run by one thread
//! per core, channels are smol's bounded channels (async-channel); the
//! workloads are `tasks`'. smol's own global executor (`smol::spawn`) is
//! meant for tests and small programs and runs on one thread unless
//! SMOL_THREADS says otherwise, so this is smol's documented multi-threaded
//! set-up instead: a static `Executor`, each executor thread blocked in
//! `smol::block_on(EXECUTOR.run(pending))`. The main task is the future given
//! to `smol::block_on` on the main thread, outside those threads (as tokio's
//! `block_on`).

use std::future;
use std::num::NonZeroUsize;
use std::thread;
use std::time::Duration;

use smol::channel;
use smol::{Executor, Task, Timer};

use crate::tasks::Job;
use crate::tasks::{TaskRuntime, async_channel_ends};

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

/// The static `EXECUTOR` and its threads.
pub struct Smol;

impl TaskRuntime for Smol {
    type Handle<T: Send + 'static> = Task<T>;

    /// Starts one executor thread per core (they live until the process
    /// exits), then spawns one 1 ms timer task and waits for it, so that the
    /// executor's state and async-io's timer reactor, both created lazily,
    /// exist before any clock starts.
    fn start() -> Self {
        let threads = thread::available_parallelism().map_or(1, NonZeroUsize::get);
        for i in 0..threads {
            thread::Builder::new()
                .name(format!("smol-{i}"))
                .spawn(|| smol::block_on(EXECUTOR.run(future::pending::<()>())))
                .expect("the executor threads start");
        }
        smol::block_on(EXECUTOR.spawn(Timer::after(Duration::from_millis(1))));
        Smol
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        smol::block_on(future)
    }

    /// Dropping a smol `Task` cancels it: the caller keeps and awaits it.
    fn spawn<F: Job>(future: F) -> Task<F::Output> {
        EXECUTOR.spawn(future)
    }

    fn spawn_detached(future: impl Job<Output = ()>) {
        EXECUTOR.spawn(future).detach();
    }

    /// A `Timer`, whose deadline is set when it is created.
    fn sleep(duration: Duration) -> impl Job {
        Timer::after(duration)
    }

    async_channel_ends!(channel);
}
