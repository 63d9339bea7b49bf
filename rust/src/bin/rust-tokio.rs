use bench::protocol::{Implementation, Workload};
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
        Ok(match args.workload {
            Workload::Sleep => tokio_tasks::sleep(&rt, args.n, args.duration),
            Workload::Chain => tokio_tasks::chain(&rt, args.n),
            Workload::Bounded => tokio_tasks::bounded(&rt, args.n, args.capacity),
        })
    });
}
