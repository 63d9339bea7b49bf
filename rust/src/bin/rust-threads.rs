use bench::os_threads;
use bench::protocol::{Implementation, Workload};

const IMPL: Implementation = Implementation {
    id: "rust-threads",
    runtime: os_threads::LABEL,
    workloads: &[Workload::Sleep, Workload::Chain, Workload::Bounded],
    rendezvous: true,
};

fn main() {
    let args = IMPL.parse_args();
    IMPL.run(&args, |args| match args.workload {
        Workload::Sleep => os_threads::sleep(args.n, args.duration),
        Workload::Chain => os_threads::chain(args.n),
        Workload::Bounded => os_threads::bounded(args.n, args.capacity),
    });
}
