use bench::os_threads;
use bench::protocol::{Implementation, SYSTEM_MALLOC, Work, Workload};

const IMPL: Implementation = Implementation {
    id: "rust-threads",
    runtime: os_threads::LABEL,
    allocator: SYSTEM_MALLOC,
    workloads: &[Workload::Sleep, Workload::Chain, Workload::Bounded],
    rendezvous: true,
    after_help: None,
};

fn main() {
    let args = IMPL.parse_args();
    IMPL.run(&args, |args| match args.work {
        Work::Sleep { duration } => os_threads::sleep(args.n, duration),
        Work::Chain => os_threads::chain(args.n),
        Work::Bounded { capacity, .. } => os_threads::bounded(args.n, capacity),
        // Not declared: 1.1 million OS threads is a different question
        // (docs/protocol.md, skynet).
        Work::Skynet => unreachable!("parse_args admits only the declared workloads"),
    });
}
