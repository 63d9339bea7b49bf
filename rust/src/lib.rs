//! The Rust implementations of the benchmark (docs/protocol.md): one binary
//! per implementation in `src/bin`, sharing the protocol's command line and
//! JSON report (`protocol`) and one module per way of running tasks; the
//! workloads of tokio, async-std and smol are written once (`tasks`), over
//! each runtime's spawn, sleep and channel (`tokio_tasks`, `async_std_tasks`,
//! `smol_tasks`).

pub mod async_std_tasks;
pub mod join_all;
pub mod os_threads;
pub mod protocol;
pub mod smol_tasks;
pub mod tasks;
// rust-tokio's HTTP server: the feature `serve` (Cargo.toml), always on in
// the stock build; a build of another release may leave it out (versions.py).
#[cfg(feature = "serve")]
pub mod tokio_server;
pub mod tokio_tasks;
