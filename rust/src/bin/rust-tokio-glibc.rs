//! `rust-tokio-glibc`: the rust-tokio program (`tokio_tasks::main`, the same
//! code) with Rust's default allocator, the system's (glibc) malloc, instead
//! of mimalloc. It shows the allocator's share of rust-tokio's figures, and
//! it is the program most published tokio benchmarks ran. No `serve`: the
//! comparison is about the task workloads.

use bench::protocol::{Implementation, SYSTEM_MALLOC};
use bench::{tasks, tokio_tasks};

const IMPL: Implementation =
    tasks::implementation("rust-tokio-glibc", tokio_tasks::LABEL, SYSTEM_MALLOC);

fn main() {
    tokio_tasks::main(&IMPL);
}
