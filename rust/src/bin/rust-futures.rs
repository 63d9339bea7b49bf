use bench::protocol::{Implementation, Workload};
use bench::{join_all, tokio_tasks};

const IMPL: Implementation = Implementation {
    id: "rust-futures",
    runtime: join_all::LABEL,
    workloads: &[Workload::Sleep],
    rendezvous: false,
};

fn main() {
    let args = IMPL.parse_args();
    let rt = tokio_tasks::runtime();
    // parse_args admits only the declared workloads, i.e. sleep.
    IMPL.run(&args, |args| {
        Ok(join_all::sleep(&rt, args.n, args.duration))
    });
}
