use bench::async_std_tasks;
use bench::protocol::{Implementation, Workload};

const IMPL: Implementation = Implementation {
    id: "rust-async-std",
    runtime: async_std_tasks::LABEL,
    workloads: &[Workload::Sleep, Workload::Chain, Workload::Bounded],
    rendezvous: false,
};

fn main() {
    let args = IMPL.parse_args();
    async_std_tasks::start_runtime();
    IMPL.run(&args, |args| {
        Ok(match args.workload {
            Workload::Sleep => async_std_tasks::sleep(args.n, args.duration),
            Workload::Chain => async_std_tasks::chain(args.n),
            Workload::Bounded => async_std_tasks::bounded(args.n, args.capacity),
        })
    });
}
