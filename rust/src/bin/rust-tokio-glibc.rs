//! `rust-tokio-glibc`: the rust-tokio program (`tokio_tasks::main`, the same
//! code) with Rust's default allocator, the system's (glibc) malloc, instead
//! of mimalloc. It shows the allocator's share of rust-tokio's figures, and
//! it is the program most published tokio benchmarks ran. No `serve`: the
//! comparison is about the task workloads.

use bench::protocol::{Implementation, SYSTEM_MALLOC, Workload};
use bench::tokio_tasks;

const IMPL: Implementation = Implementation {
    id: "rust-tokio-glibc",
    runtime: tokio_tasks::LABEL,
    allocator: SYSTEM_MALLOC,
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
