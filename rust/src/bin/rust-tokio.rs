use bench::protocol::{Implementation, Work, Workload};
use bench::tokio_tasks;

const IMPL: Implementation = Implementation {
    id: "rust-tokio",
    runtime: tokio_tasks::LABEL,
    workloads: &[Workload::Sleep, Workload::Chain, Workload::Bounded],
    rendezvous: false,
};

fn main() {
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
