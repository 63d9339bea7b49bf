//! `rust-threads`: the baseline async is measured against (Vaughan). One OS
//! thread per task, channels are `std::sync::mpsc::sync_channel`, which has a
//! true rendezvous mode (capacity 0). Threads get a 64 KiB stack instead of
//! the 2 MiB default so the limit met is the kernel's (threads, PIDs or
//! memory mappings: about 16k threads on a default `vm.max_map_count`), not
//! address space; a thread that cannot be spawned fails the run.

use std::io;
use std::mem;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::protocol::Sample;

pub const LABEL: &str = concat!("std::thread, rustc ", env!("RUSTC_VERSION"));

const STACK_SIZE: usize = 64 * 1024;

/// Spawns thread `i` of `n`, naming both in the error if the OS refuses.
fn spawn<T, F>(i: usize, n: usize, f: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(f)
        .map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("spawning thread {} of {n}: {err}", i + 1),
            )
        })
}

/// N threads each sleep `duration`; the main thread joins them all.
pub fn sleep(n: usize, duration: Duration) -> io::Result<Sample> {
    let start = Instant::now();
    let threads = (0..n)
        .map(|i| spawn(i, n, move || thread::sleep(duration)))
        .collect::<io::Result<Vec<_>>>()?;
    let spawned = start.elapsed();
    let mut done = 0;
    for t in threads {
        t.join().expect("a sleeping thread panicked");
        done += 1;
    }
    Ok(Sample {
        result: done,
        elapsed: start.elapsed(),
        spawn: Some(spawned),
    })
}

/// N relay threads linked by N+1 rendezvous channels. Threads are joined
/// after the clock stops, so the next iteration starts without them.
pub fn chain(n: usize) -> io::Result<Sample> {
    let start = Instant::now();
    let (first, mut last) = mpsc::sync_channel(0);
    let mut threads = Vec::with_capacity(n);
    for i in 0..n {
        let (output, next) = mpsc::sync_channel(0);
        let input = mem::replace(&mut last, next);
        threads.push(spawn(i, n, move || relay(input, output))?);
    }
    first.send(0).expect("the chain is intact");
    let result = last.recv().expect("the chain is intact");
    let elapsed = start.elapsed();
    for t in threads {
        t.join().expect("a relay thread panicked");
    }
    Ok(Sample {
        result,
        elapsed,
        spawn: None,
    })
}

/// A link whose neighbour is gone (a failed run being torn down) just ends:
/// the main thread reports the broken chain.
fn relay(input: Receiver<u64>, output: SyncSender<u64>) {
    if let Ok(x) = input.recv() {
        let _ = output.send(x + 1);
    }
}

/// N producer threads send their index into one channel of `capacity`
/// (0 = rendezvous); a consumer thread, spawned first so that it drains the
/// channel while the producers are being started, receives and sums N
/// values. The main thread joins the consumer, then every producer.
pub fn bounded(n: usize, capacity: usize) -> io::Result<Sample> {
    let start = Instant::now();
    let (tx, rx) = mpsc::sync_channel::<u64>(capacity);
    // A receive fails only if producers are gone on a failed run: the
    // consumer then stops and the main thread reports the spawn error.
    let consumer = spawn(0, n + 1, move || rx.iter().take(n).sum::<u64>())?;
    let producers = (0..n)
        .map(|i| {
            let tx = tx.clone();
            // A send fails only if the consumer gave up on a failed run.
            spawn(i + 1, n + 1, move || {
                let _ = tx.send(i as u64);
            })
        })
        .collect::<io::Result<Vec<_>>>()?;
    drop(tx);
    let sum = consumer.join().expect("the consumer panicked");
    for producer in producers {
        producer.join().expect("a producer panicked");
    }
    Ok(Sample {
        result: sum,
        elapsed: start.elapsed(),
        spawn: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_completes_every_thread_after_the_duration() {
        let sample = sleep(200, Duration::from_millis(20)).unwrap();
        assert_eq!(sample.result, 200);
        assert!(sample.elapsed >= Duration::from_millis(20));
    }

    #[test]
    fn chain_adds_one_per_link() {
        assert_eq!(chain(200).unwrap().result, 200);
    }

    #[test]
    fn bounded_sums_every_index() {
        for capacity in [0, 1, 10, 200] {
            assert_eq!(bounded(200, capacity).unwrap().result, 199 * 200 / 2);
        }
    }
}
