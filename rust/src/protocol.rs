//! The program protocol shared by every binary: parse
//! `WORKLOAD --n N [--buffer B] [--duration-ms D] [--iterations K]`,
//! run K timed iterations, print one JSON line.

use std::io;
use std::num::{NonZeroU64, NonZeroUsize};
use std::process;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{
    Arg, ArgAction, ArgMatches, Command, CommandFactory, FromArgMatches, Parser, ValueEnum,
};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    Sleep,
    Chain,
    Bounded,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Sleep => "sleep",
            Workload::Chain => "chain",
            Workload::Bounded => "bounded",
        }
    }

    fn default_iterations(self) -> usize {
        match self {
            Workload::Sleep => 1,
            Workload::Chain => 2,
            Workload::Bounded => 10,
        }
    }
}

#[derive(Parser, Debug)]
#[command(allow_negative_numbers = true)]
struct Cli {
    /// Workload to run.
    #[arg(value_enum)]
    workload: Workload,
    /// Number of tasks.
    #[arg(long, value_name = "N")]
    n: NonZeroUsize,
    /// Channel capacity for `bounded`; 0 asks for a rendezvous channel.
    #[arg(long, value_name = "B", default_value_t = 1)]
    buffer: usize,
    /// How long each `sleep` task sleeps, in milliseconds.
    #[arg(long, value_name = "D", default_value = "10000")]
    duration_ms: NonZeroU64,
    /// Timed iterations (default: sleep 1, chain 2, bounded 10).
    #[arg(long, value_name = "K")]
    iterations: Option<NonZeroUsize>,
}

/// What a binary is: its implementation id, runtime label and abilities.
pub struct Implementation {
    pub id: &'static str,
    /// Runtime name and crate versions, e.g. `tokio 1.54.1`.
    pub runtime: &'static str,
    pub workloads: &'static [Workload],
    /// Whether its channels accept capacity 0; if not, `--buffer 0` runs
    /// with capacity 1 and the report says so.
    pub rendezvous: bool,
}

/// Validated arguments.
pub struct Args {
    pub workload: Workload,
    pub n: usize,
    pub buffer: usize,
    /// The capacity `bounded` actually uses.
    pub capacity: usize,
    pub duration: Duration,
    pub iterations: usize,
}

/// One timed iteration.
pub struct Sample {
    pub result: u64,
    pub elapsed: Duration,
    /// `sleep` only: how long starting the N tasks took.
    pub spawn: Option<Duration>,
}

#[derive(Serialize)]
struct Report {
    workload: &'static str,
    n: usize,
    buffer: Option<usize>,
    result: u64,
    results: Vec<u64>,
    iter_ns: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    spawn_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<usize>,
    runtime: &'static str,
}

impl Implementation {
    /// Parses the process arguments. `--version` prints the runtime label;
    /// bad arguments exit 2 with one line on stderr.
    pub fn parse_args(&self) -> Args {
        let mut command = self.command();
        let parsed = command
            .try_get_matches_from_mut(std::env::args_os())
            .and_then(|matches| {
                if matches.get_flag("version") {
                    println!("{}", self.runtime);
                    process::exit(0);
                }
                self.args(&mut command, &matches)
            });
        parsed.unwrap_or_else(|err| {
            if err.kind() == ErrorKind::DisplayHelp {
                err.exit();
            }
            eprintln!("{}", one_line(&err));
            process::exit(2)
        })
    }

    /// clap's own `--version` would prefix the binary name; the harness wants
    /// the runtime label alone.
    fn command(&self) -> Command {
        Cli::command().name(self.id).disable_version_flag(true).arg(
            Arg::new("version")
                .long("version")
                .action(ArgAction::SetTrue)
                .exclusive(true)
                .help("Print the runtime and crate versions"),
        )
    }

    fn args(&self, command: &mut Command, matches: &ArgMatches) -> Result<Args, clap::Error> {
        let cli = Cli::from_arg_matches(matches)?;
        if !self.workloads.contains(&cli.workload) {
            return Err(command.error(
                ErrorKind::InvalidValue,
                format!(
                    "{} does not implement the '{}' workload",
                    self.id,
                    cli.workload.name()
                ),
            ));
        }
        Ok(Args {
            workload: cli.workload,
            n: cli.n.get(),
            buffer: cli.buffer,
            capacity: if self.rendezvous {
                cli.buffer
            } else {
                cli.buffer.max(1)
            },
            duration: Duration::from_millis(cli.duration_ms.get()),
            iterations: cli
                .iterations
                .map_or(cli.workload.default_iterations(), NonZeroUsize::get),
        })
    }

    /// Runs the iterations and prints the JSON line. An iteration that fails
    /// (a thread that cannot be spawned) ends the process with status 1 and
    /// one line on stderr.
    pub fn run(&self, args: &Args, mut iteration: impl FnMut(&Args) -> io::Result<Sample>) {
        let mut samples = Vec::with_capacity(args.iterations);
        for _ in 0..args.iterations {
            match iteration(args) {
                Ok(sample) => samples.push(sample),
                Err(err) => {
                    eprintln!("error: {err}");
                    process::exit(1);
                }
            }
        }
        let bounded = args.workload == Workload::Bounded;
        let report = Report {
            workload: args.workload.name(),
            n: args.n,
            buffer: bounded.then_some(args.buffer),
            result: samples.last().expect("at least one iteration").result,
            results: samples.iter().map(|s| s.result).collect(),
            iter_ns: samples.iter().map(|s| nanos(s.elapsed)).collect(),
            spawn_ns: samples[0].spawn.map(nanos),
            capacity: (bounded && args.capacity != args.buffer).then_some(args.capacity),
            runtime: self.runtime,
        };
        println!(
            "{}",
            serde_json::to_string(&report).expect("report serializes")
        );
    }
}

/// clap's message up to its first blank line (dropping usage and tips),
/// joined into the protocol's single stderr line.
fn one_line(err: &clap::Error) -> String {
    let message = err.render().to_string();
    let lines: Vec<_> = message
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    lines.join(" ")
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos()
        .try_into()
        .expect("an iteration shorter than 584 years")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Implementation = Implementation {
        id: "rust-test",
        runtime: "test 1.0",
        workloads: &[Workload::Sleep, Workload::Bounded],
        rendezvous: false,
    };

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        let mut command = TEST.command();
        let matches = command
            .try_get_matches_from_mut(std::iter::once("bench").chain(argv.iter().copied()))?;
        TEST.args(&mut command, &matches)
    }

    #[test]
    fn defaults_follow_the_protocol() {
        let args = parse(&["sleep", "--n", "5"]).unwrap();
        assert_eq!((args.n, args.iterations), (5, 1));
        assert_eq!(args.duration, Duration::from_secs(10));
        assert_eq!(parse(&["bounded", "--n", "5"]).unwrap().iterations, 10);
    }

    #[test]
    fn buffer_zero_falls_back_to_capacity_one_without_rendezvous() {
        let args = parse(&["bounded", "--n", "5", "--buffer", "0"]).unwrap();
        assert_eq!((args.buffer, args.capacity), (0, 1));
    }

    #[test]
    fn rejects_bad_arguments() {
        for argv in [
            &["sleep"][..],
            &["sleep", "--n", "0"],
            &["sleep", "--n", "x"],
            &["bounded", "--n", "3", "--buffer", "-1"],
            &["sleep", "--n", "3", "--duration-ms", "0"],
            &["sleep", "--n", "3", "--iterations", "0"],
            &["sleep", "--n", "3", "--bogus"],
            &["spin", "--n", "3"],
            &["chain", "--n", "3"],
        ] {
            let err = parse(argv)
                .err()
                .unwrap_or_else(|| panic!("accepted {argv:?}"));
            assert!(one_line(&err).starts_with("error: "));
        }
    }
}
