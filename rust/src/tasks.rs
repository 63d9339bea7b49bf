//! The workloads of the runtimes whose tasks are spawned futures (tokio,
//! async-std, smol), written once over what differs between them: how a task
//! is spawned, started and joined, which channel and which sleep it uses
//! (`TaskRuntime`, implemented in `tokio_tasks`, `async_std_tasks` and
//! `smol_tasks`). Every body is generic, so each binary gets its own copy,
//! monomorphized over its runtime's own types: no boxing and no dynamic
//! dispatch between a workload and its runtime.
//!
//! The main task is the future given to the runtime's `block_on` (on the
//! main thread, outside the runtime's worker threads): it spawns and waits;
//! for `chain` it also sends the first value and reads the last.

use std::fmt::Debug;
use std::mem;
use std::time::{Duration, Instant};

use crate::protocol::{Implementation, Sample, Work, Workload};

/// A future a task can run: it can move to another thread, and so can its
/// output.
pub trait Job: Future<Output: Send + 'static> + Send + 'static {}

impl<F: Future<Output: Send + 'static> + Send + 'static> Job for F {}

/// What the workloads need of a runtime. Spawning, sleeping and the channel
/// are associated functions, not methods, because a task spawns from inside
/// the runtime (a skynet node spawns its children) with no handle at hand.
pub trait TaskRuntime: Sized + 'static {
    /// A spawned task's handle: awaiting it gives the task's output.
    type Handle<T: Send + 'static>: Future<Output = T> + Send;
    /// The two ends of a bounded channel of `u64`.
    type Sender: Clone + Send + 'static;
    type Receiver: Send + 'static;

    /// Starts the runtime (its threads, its timer), before any clock.
    fn start() -> Self;

    /// Runs `future` as the main task, to completion.
    fn block_on<F: Future>(&self, future: F) -> F::Output;

    fn spawn<F: Job>(future: F) -> Self::Handle<F::Output>;

    /// Spawns a task whose end nobody awaits.
    fn spawn_detached(future: impl Job<Output = ()>);

    /// The runtime's own sleep future, its deadline taken when created.
    fn sleep(duration: Duration) -> impl Job;

    /// A channel of `capacity` >= 1.
    fn channel(capacity: usize) -> (Self::Sender, Self::Receiver);

    /// Fails only if the receiver is gone.
    fn send(tx: &Self::Sender, value: u64) -> impl Future<Output = Result<(), impl Debug>> + Send;

    /// `None` once every sender is gone and the channel is empty.
    fn recv(rx: &mut Self::Receiver) -> impl Future<Output = Option<u64>> + Send;
}

/// The channel half of `TaskRuntime` for async-std and smol, whose channels
/// are both async-channel's (`async_std::channel` re-exports major version
/// 1, `smol::channel` 2): the same code over two crates' types. `$channel`
/// is the module in scope that holds them.
macro_rules! async_channel_ends {
    ($channel:ident) => {
        type Sender = $channel::Sender<u64>;
        type Receiver = $channel::Receiver<u64>;

        /// No rendezvous mode (`bounded(0)` panics): capacity >= 1.
        fn channel(capacity: usize) -> (Self::Sender, Self::Receiver) {
            $channel::bounded(capacity)
        }

        fn send(
            tx: &Self::Sender,
            value: u64,
        ) -> impl Future<Output = Result<(), impl ::std::fmt::Debug>> + Send {
            tx.send(value)
        }

        fn recv(rx: &mut Self::Receiver) -> impl Future<Output = Option<u64>> + Send {
            async move { rx.recv().await.ok() }
        }
    };
}
pub(crate) use async_channel_ends;

/// A binary of these workloads: every one of them, and channels with no
/// rendezvous mode (none of the three runtimes has one).
pub const fn implementation(
    id: &'static str,
    runtime: &'static str,
    allocator: &'static str,
) -> Implementation {
    Implementation {
        id,
        runtime,
        allocator,
        workloads: &[
            Workload::Sleep,
            Workload::Chain,
            Workload::Bounded,
            Workload::Skynet,
        ],
        rendezvous: false,
        after_help: None,
    }
}

/// The whole program of a binary on runtime `R`: parse, start the runtime,
/// run the iterations, print the JSON line.
pub fn main<R: TaskRuntime>(implementation: &Implementation) {
    let args = implementation.parse_args();
    let rt = R::start();
    implementation.run(&args, |args| {
        Ok(match args.work {
            Work::Sleep { duration } => sleep(&rt, args.n, duration),
            Work::Chain => chain(&rt, args.n),
            Work::Bounded { capacity, .. } => bounded(&rt, args.n, capacity),
            Work::Skynet => skynet(&rt, args.n),
        })
    });
}

/// N spawned tasks, each the runtime's sleep future itself; the main task
/// keeps every handle and awaits them one by one.
pub fn sleep<R: TaskRuntime>(rt: &R, n: usize, duration: Duration) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n).map(|_| R::spawn(R::sleep(duration))).collect();
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

/// N relay tasks linked by N+1 channels of capacity 1 (none of the three
/// runtimes has a rendezvous channel), detached: each is done once it has
/// passed its value on.
pub fn chain<R: TaskRuntime>(rt: &R, n: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let (first, mut last) = R::channel(1);
        for _ in 0..n {
            let (output, next) = R::channel(1);
            R::spawn_detached(relay::<R>(mem::replace(&mut last, next), output));
        }
        R::send(&first, 0).await.expect("the chain is intact");
        let result = R::recv(&mut last).await.expect("the chain is intact");
        Sample {
            result,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

async fn relay<R: TaskRuntime>(mut input: R::Receiver, output: R::Sender) {
    let x = R::recv(&mut input).await.expect("the previous link sends");
    R::send(&output, x + 1)
        .await
        .expect("the next link receives");
}

/// N producer tasks send their index into one channel of `capacity`; a
/// consumer task, spawned first, sums what arrives until the channel closes.
/// The channel closes when the last producer drops its sender, i.e. once
/// every producer has finished, so the consumer's sum means all N have sent
/// and finished; the producers are detached and the main task only awaits
/// the consumer. The consumer is a spawned task like the producers: a
/// consumer on the `block_on` future (the main thread, outside the worker
/// threads) would make every hand-off a wake-up across threads.
pub fn bounded<R: TaskRuntime>(rt: &R, n: usize, capacity: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let (tx, mut rx) = R::channel(capacity);
        let consumer = R::spawn(async move {
            let mut sum = 0;
            while let Some(i) = R::recv(&mut rx).await {
                sum += i;
            }
            sum
        });
        for i in 0..n as u64 {
            let tx = tx.clone();
            R::spawn_detached(async move { R::send(&tx, i).await.expect("the consumer receives") });
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
/// spawned task like every node, the main task only awaits its handle.
pub fn skynet<R: TaskRuntime>(rt: &R, n: usize) -> Sample {
    rt.block_on(async {
        let start = Instant::now();
        let sum = R::spawn(node::<R>(0, n as u64)).await;
        Sample {
            result: sum,
            elapsed: start.elapsed(),
            spawn: None,
        }
    })
}

/// One node: a leaf returns its index; a node of size > 1 spawns its 10
/// children, then awaits their handles in order and returns the sum.
/// The named `impl Future + Send` return type is what lets the async block
/// spawn itself without a `Box::pin`: spawning needs the child future to be
/// `Send`, which the signature promises, so the compiler need not look into
/// the very body it is checking (as an `async fn`, rustc 1.95 says "cannot
/// satisfy `impl Future<Output = u64>: Send`").
/// Each node is then one allocation, the runtime's task, with no boxed
/// future inside it.
#[allow(clippy::manual_async_fn)] // as an async fn it could not spawn itself
fn node<R: TaskRuntime>(num: u64, size: u64) -> impl Future<Output = u64> + Send {
    async move {
        if size == 1 {
            return num;
        }
        let step = size / 10;
        let children: [_; 10] =
            std::array::from_fn(|k| R::spawn(node::<R>(num + k as u64 * step, step)));
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
    use crate::async_std_tasks::AsyncStd;
    use crate::smol_tasks::Smol;
    use crate::tokio_tasks::Tokio;

    /// Every workload at small N. One test per runtime, so that each
    /// runtime is started once in the test process (smol's executor threads
    /// live until it exits).
    fn runs_every_workload<R: TaskRuntime>() {
        let rt = R::start();
        let sample = sleep(&rt, 1000, Duration::from_millis(20));
        assert_eq!(sample.result, 1000);
        assert!(sample.elapsed >= Duration::from_millis(20));
        assert_eq!(chain(&rt, 1000).result, 1000);
        for capacity in [1, 10, 1000] {
            assert_eq!(bounded(&rt, 1000, capacity).result, 999 * 1000 / 2);
        }
        for n in [1, 10, 100, 10_000] {
            assert_eq!(skynet(&rt, n).result, (n * (n - 1) / 2) as u64);
        }
    }

    #[test]
    fn tokio_runs_every_workload() {
        runs_every_workload::<Tokio>();
    }

    #[test]
    fn async_std_runs_every_workload() {
        runs_every_workload::<AsyncStd>();
    }

    #[test]
    fn smol_runs_every_workload() {
        runs_every_workload::<Smol>();
    }
}
