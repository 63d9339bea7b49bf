//! `rust-tokio`: every task is a real `tokio::spawn` on the multi-thread
//! runtime, channels are `tokio::sync::mpsc`; the workloads are `tasks`'.

use std::fmt::Debug;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::protocol::Implementation;
use crate::tasks::Job;
use crate::tasks::{self, TaskRuntime};

pub const LABEL: &str = concat!(
    "tokio ",
    env!("TOKIO_VERSION"),
    ", rustc ",
    env!("RUSTC_VERSION")
);

/// The program of `rust-tokio` and `rust-tokio-glibc` (the same code, two
/// binaries that differ only by their global allocator).
pub fn main(implementation: &Implementation) {
    tasks::main::<Tokio>(implementation);
}

/// The multi-thread runtime (one worker per core), built before any clock
/// starts.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("the tokio runtime starts")
}

pub struct Tokio(Runtime);

/// A `JoinHandle` whose output is the task's own: tokio's says whether the
/// task panicked or was cancelled, which none of these tasks is.
pub struct Joined<T>(JoinHandle<T>);

impl<T> Future for Joined<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|joined| joined.expect("a task finishes"))
    }
}

impl TaskRuntime for Tokio {
    type Handle<T: Send + 'static> = Joined<T>;
    type Sender = mpsc::Sender<u64>;
    type Receiver = mpsc::Receiver<u64>;

    fn start() -> Self {
        Tokio(runtime())
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawn<F: Job>(future: F) -> Joined<F::Output> {
        Joined(tokio::spawn(future))
    }

    /// Dropping a `JoinHandle` detaches the task.
    fn spawn_detached(future: impl Job<Output = ()>) {
        tokio::spawn(future);
    }

    fn sleep(duration: Duration) -> impl Job {
        tokio::time::sleep(duration)
    }

    /// mpsc has no rendezvous channel: capacity >= 1.
    fn channel(capacity: usize) -> (Self::Sender, Self::Receiver) {
        mpsc::channel(capacity)
    }

    fn send(tx: &Self::Sender, value: u64) -> impl Future<Output = Result<(), impl Debug>> + Send {
        tx.send(value)
    }

    fn recv(rx: &mut Self::Receiver) -> impl Future<Output = Option<u64>> + Send {
        rx.recv()
    }
}
