use bench::protocol::{Implementation, SYSTEM_MALLOC, Work, Workload};
use bench::smol_tasks;

const IMPL: Implementation = Implementation {
    id: "rust-smol",
    runtime: smol_tasks::LABEL,
    allocator: SYSTEM_MALLOC,
    workloads: &[
        Workload::Sleep,
        Workload::Chain,
        Workload::Bounded,
        Workload::Skynet,
    ],
    rendezvous: false,
    after_help: None,
};

fn main() {
    let args = IMPL.parse_args();
    smol_tasks::start_runtime();
    IMPL.run(&args, |args| {
        Ok(match args.work {
            Work::Sleep { duration } => smol_tasks::sleep(args.n, duration),
            Work::Chain => smol_tasks::chain(args.n),
            Work::Bounded { capacity, .. } => smol_tasks::bounded(args.n, capacity),
            Work::Skynet => smol_tasks::skynet(args.n),
        })
    });
}
