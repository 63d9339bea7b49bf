use bench::protocol::{Implementation, Workload};
use bench::{tokio_server, tokio_tasks};

const IMPL: Implementation = Implementation {
    id: "rust-tokio",
    runtime: tokio_tasks::LABEL,
    workloads: &[
        Workload::Sleep,
        Workload::Chain,
        Workload::Bounded,
        Workload::Skynet,
    ],
    rendezvous: false,
    after_help: Some(concat!(
        "The HTTP server (docs/protocol.md): ",
        "rust-tokio serve --port P --delay-ms D [--threads T]",
        " (rust-tokio serve --help)"
    )),
};

fn main() {
    // `serve` is not a workload: the protocol's HTTP server, its own options.
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "serve") {
        std::process::exit(tokio_server::main(std::env::args_os().skip(1)));
    }
    tokio_tasks::main(&IMPL);
}
