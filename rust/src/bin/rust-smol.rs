use bench::protocol::{Implementation, SYSTEM_MALLOC};
use bench::smol_tasks::{LABEL, Smol};
use bench::tasks;

const IMPL: Implementation = tasks::implementation("rust-smol", LABEL, SYSTEM_MALLOC);

fn main() {
    tasks::main::<Smol>(&IMPL);
}
