use bench::protocol::{Implementation, Work, Workload};
use bench::{tokio_server, tokio_tasks};

const IMPL: Implementation = Implementation {
    id: "rust-tokio",
    runtime: tokio_tasks::LABEL,
    workloads: &[Workload::Sleep, Workload::Chain, Workload::Bounded],
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
    let args = IMPL.parse_args();
    let rt = tokio_tasks::runtime();
    IMPL.run(&args, |args| {
        Ok(match args.work {
            Work::Sleep { duration } => tokio_tasks::sleep(&rt, args.n, duration),
            Work::Chain => tokio_tasks::chain(&rt, args.n),
            Work::Bounded { capacity, .. } => tokio_tasks::bounded(&rt, args.n, capacity),
        })
    });
}
