//! `rust-tokio-mimalloc`: the rust-tokio program (`tokio_tasks::main`, the
//! same code), linked with mimalloc as the global allocator instead of the
//! system's (glibc) malloc. It shows the allocator's share of rust-tokio's
//! figures: a task is allocated on the thread that spawns it and often freed
//! on another worker, the pattern glibc's per-thread arenas handle worst.
//! No `serve`: the comparison is about the task workloads.

use bench::protocol::{Implementation, Workload};
use bench::tokio_tasks;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const IMPL: Implementation = Implementation {
    id: "rust-tokio-mimalloc",
    runtime: concat!(
        "tokio ",
        env!("TOKIO_VERSION"),
        ", mimalloc ",
        env!("MIMALLOC_VERSION"),
        " (libmimalloc-sys ",
        env!("LIBMIMALLOC_SYS_VERSION"),
        ", mimalloc v3)",
        ", rustc ",
        env!("RUSTC_VERSION")
    ),
    workloads: &[
        Workload::Sleep,
        Workload::Chain,
        Workload::Bounded,
        Workload::Skynet,
    ],
    rendezvous: false,
    after_help: None,
};

fn main() {
    tokio_tasks::main(&IMPL);
}
