use bench::protocol::{Implementation, MIMALLOC};
use bench::{tasks, tokio_tasks};

// Rust's std allocates with the C library's malloc; every other runtime here
// brings a thread-caching allocator of its own. A tokio task is allocated by
// the thread that spawns it and often freed by another worker, which glibc's
// arenas serialise: mimalloc makes this program faster at every workload and
// leaner at 1M tasks (docs/protocol.md, "Allocators"); rust-tokio-glibc keeps
// the default allocator's figures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const IMPL: Implementation = Implementation {
    after_help: if cfg!(feature = "serve") {
        Some(concat!(
            "The HTTP server (docs/protocol.md): ",
            "rust-tokio serve --port P --delay-ms D [--threads T]",
            " (rust-tokio serve --help)"
        ))
    } else {
        None
    },
    ..tasks::implementation("rust-tokio", tokio_tasks::LABEL, MIMALLOC)
};

fn main() {
    // `serve` is not a workload: the protocol's HTTP server, its own options,
    // in the sibling binary rust-tokio-serve, which replaces this process
    // (exec: the same pid), so that this binary links no HTTP server. A build
    // without the feature `serve` (another tokio release that hyper-util does
    // not take, versions.py) has no sibling and refuses it with exit 2, saying why.
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "serve") {
        std::process::exit(serve());
    }
    tokio_tasks::main(&IMPL);
}

#[cfg(feature = "serve")]
fn serve() -> i32 {
    use std::os::unix::process::CommandExt;
    let sibling = std::env::current_exe()
        .map(|exe| exe.with_file_name("rust-tokio-serve"))
        .unwrap_or_else(|_| "rust-tokio-serve".into());
    let err = std::process::Command::new(&sibling)
        .args(std::env::args_os().skip(1))
        .exec();
    eprintln!("error: serve: cannot start {}: {err}", sibling.display());
    2
}

#[cfg(not(feature = "serve"))]
fn serve() -> i32 {
    eprintln!(concat!(
        "error: serve: not in this build (tokio ",
        env!("TOKIO_VERSION"),
        ", built without the feature `serve`: hyper-util needs tokio >= 1.13)"
    ));
    2
}
