//! `rust-tokio serve`'s own binary: the HTTP server of docs/protocol.md
//! (src/tokio_server.rs), with rust-tokio's allocator. `rust-tokio serve ...`
//! replaces itself with this program (exec: the same process, the one the
//! harness measures), so that the rust-tokio binary every task workload runs
//! links no hyper (README.md, "One binary per role").

use bench::protocol::MIMALLOC;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // argv as rust-tokio's: "serve", then the server's options
    std::process::exit(bench::tokio_server::main(std::env::args_os().skip(1), MIMALLOC));
}
