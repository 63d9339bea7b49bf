use bench::async_std_tasks::{AsyncStd, LABEL};
use bench::protocol::{Implementation, SYSTEM_MALLOC};
use bench::tasks;

const IMPL: Implementation = tasks::implementation("rust-async-std", LABEL, SYSTEM_MALLOC);

fn main() {
    tasks::main::<AsyncStd>(&IMPL);
}
