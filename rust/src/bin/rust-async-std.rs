use bench::async_std_tasks;
use bench::protocol::{Implementation, SYSTEM_MALLOC, Work, Workload};

const IMPL: Implementation = Implementation {
    id: "rust-async-std",
    runtime: async_std_tasks::LABEL,
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
    async_std_tasks::start_runtime();
    IMPL.run(&args, |args| {
        Ok(match args.work {
            Work::Sleep { duration } => async_std_tasks::sleep(args.n, duration),
            Work::Chain => async_std_tasks::chain(args.n),
            Work::Bounded { capacity, .. } => async_std_tasks::bounded(args.n, capacity),
            Work::Skynet => async_std_tasks::skynet(args.n),
        })
    });
}
