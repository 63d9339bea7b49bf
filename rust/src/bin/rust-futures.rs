use bench::protocol::{Implementation, SYSTEM_MALLOC, Work, Workload};
use bench::{join_all, tokio_tasks};

const IMPL: Implementation = Implementation {
    id: "rust-futures",
    runtime: join_all::LABEL,
    allocator: SYSTEM_MALLOC,
    workloads: &[Workload::Sleep],
    rendezvous: false,
    after_help: None,
};

fn main() {
    let args = IMPL.parse_args();
    let rt = tokio_tasks::runtime();
    IMPL.run(&args, |args| match args.work {
        Work::Sleep { duration } => Ok(join_all::sleep(&rt, args.n, duration)),
        _ => unreachable!("parse_args admits only the declared workloads"),
    });
}
