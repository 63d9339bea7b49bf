//! The program protocol shared by every binary (docs/protocol.md): parse
//! `WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D]
//! [--warmup-ms W]`, prime (`chain`), run the untimed warm-up and K timed
//! iterations, print one JSON line.

use std::io;
use std::num::{NonZeroU64, NonZeroUsize};
use std::process;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
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
    Skynet,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Sleep => "sleep",
            Workload::Chain => "chain",
            Workload::Bounded => "bounded",
            Workload::Skynet => "skynet",
        }
    }
}

#[derive(Parser, Debug)]
#[command(allow_negative_numbers = true)]
struct Cli {
    /// Workload to run (docs/protocol.md).
    #[arg(value_enum)]
    workload: Workload,
    /// Number of tasks (> 0; for `skynet` the leaves, a power of ten).
    #[arg(long, value_name = "N")]
    n: NonZeroUsize,
    /// Timed in-process iterations, the first one cold (> 0).
    #[arg(long, value_name = "K")]
    iterations: NonZeroUsize,
    /// Channel capacity, required by `bounded` (>= 0; 0 asks for a
    /// rendezvous channel).
    #[arg(long, value_name = "B")]
    buffer: Option<usize>,
    /// How long each task sleeps in milliseconds, required by `sleep` (> 0).
    #[arg(long, value_name = "D")]
    duration_ms: Option<NonZeroU64>,
    /// Run the workload untimed until W ms have passed before the timed
    /// iterations (default 0).
    #[arg(long, value_name = "W", default_value_t = 0)]
    warmup_ms: u64,
}

/// What a binary is: its implementation id, runtime label and abilities.
pub struct Implementation {
    pub id: &'static str,
    /// Runtime name and crate versions, e.g. `tokio 1.54.1, rustc 1.95.0`.
    pub runtime: &'static str,
    /// The global allocator the binary declares (`MIMALLOC` or
    /// `SYSTEM_MALLOC`), appended to the runtime label.
    pub allocator: &'static str,
    /// The workloads it declares in impls.toml; any other is bad input.
    pub workloads: &'static [Workload],
    /// Whether its channels accept capacity 0; if not, `--buffer 0` runs
    /// with capacity 1 and the report says so.
    pub rendezvous: bool,
    /// More text for `--help` (rust-tokio: its `serve` subcommand).
    pub after_help: Option<&'static str>,
}

/// One request, with what its workload needs and nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    Sleep {
        duration: Duration,
    },
    Chain,
    /// `buffer` is the request, `capacity` what the channel really gets.
    Bounded {
        buffer: usize,
        capacity: usize,
    },
    /// N is a power of ten.
    Skynet,
}

impl Work {
    pub fn workload(self) -> Workload {
        match self {
            Work::Sleep { .. } => Workload::Sleep,
            Work::Chain => Workload::Chain,
            Work::Bounded { .. } => Workload::Bounded,
            Work::Skynet => Workload::Skynet,
        }
    }
}

/// Validated arguments.
#[derive(Debug)]
pub struct Args {
    pub work: Work,
    pub n: usize,
    pub iterations: usize,
    /// Untimed runs go on until their times add up to this.
    pub warmup: Duration,
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
    warmup_ns: Vec<u64>,
    warmup_results: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    spawn_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<usize>,
    /// `chain` only: the links of the untimed chain run before all else.
    #[serde(skip_serializing_if = "Option::is_none")]
    primed: Option<usize>,
    runtime: String,
}

/// The warm-up stops after this many runs even if W ms have not passed, so
/// that the JSON line of a run of microseconds stays small.
pub const WARMUP_RUNS_MAX: usize = 10_000;

/// The priming chain has min(N, this) links (docs/protocol.md, "Priming").
pub const PRIME_LINKS_MAX: usize = 1000;

/// The allocator labels of `Implementation::allocator`.
pub const MIMALLOC: &str = concat!(
    "mimalloc ",
    env!("MIMALLOC_VERSION"),
    " (libmimalloc-sys ",
    env!("LIBMIMALLOC_SYS_VERSION"),
    ", mimalloc v3)"
);
pub const SYSTEM_MALLOC: &str = "system malloc (glibc)";

impl Implementation {
    /// The runtime label of `--version` and the JSON line.
    pub fn label(&self) -> String {
        format!("{}, {}", self.runtime, self.allocator)
    }

    /// Parses the process arguments. `--help` prints the usage on stdout and
    /// `--version` the runtime label, both exit 0; bad arguments exit 2 with
    /// one line on stderr and nothing on stdout.
    pub fn parse_args(&self) -> Args {
        let mut command = self.command();
        let parsed = command
            .try_get_matches_from_mut(std::env::args_os())
            .and_then(|matches| {
                if matches.get_flag("version") {
                    println!("{}", self.label());
                    process::exit(0);
                }
                self.args(&mut command, &matches)
            });
        parsed.unwrap_or_else(|err| {
            if err.kind() == ErrorKind::DisplayHelp {
                err.exit(); // usage on stdout, exit 0
            }
            eprintln!("{}", one_line(&err));
            process::exit(2)
        })
    }

    /// The derived command, narrowed to this binary: WORKLOAD accepts only
    /// the declared workloads (so `--help` lists those and any other is
    /// clap's "invalid value"), and clap's own `--version`, which would
    /// prefix the binary name, gives way to one printing the runtime label.
    fn command(&self) -> Command {
        let names: Vec<_> = self.workloads.iter().map(|w| w.name()).collect();
        let declared = PossibleValuesParser::new(names)
            .map(|name| Workload::from_str(&name, false).expect("a declared workload"));
        Cli::command()
            .name(self.id)
            .override_usage(format!(
                "{} WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]",
                self.id
            ))
            .mut_arg("workload", |arg| arg.value_parser(declared))
            .after_help(self.after_help.unwrap_or_default())
            .disable_version_flag(true)
            .arg(
                Arg::new("version")
                    .long("version")
                    .action(ArgAction::SetTrue)
                    .exclusive(true)
                    .help("Print the runtime and crate versions"),
            )
    }

    fn args(&self, command: &mut Command, matches: &ArgMatches) -> Result<Args, clap::Error> {
        let cli = Cli::from_arg_matches(matches)?;
        let mut missing = |option: &str| {
            command.error(
                ErrorKind::MissingRequiredArgument,
                format!("{} needs {option}", cli.workload.name()),
            )
        };
        let work = match cli.workload {
            Workload::Sleep => Work::Sleep {
                duration: Duration::from_millis(
                    cli.duration_ms
                        .ok_or_else(|| missing("--duration-ms D"))?
                        .get(),
                ),
            },
            Workload::Chain => Work::Chain,
            Workload::Bounded => {
                let buffer = cli.buffer.ok_or_else(|| missing("--buffer B"))?;
                Work::Bounded {
                    buffer,
                    capacity: if self.rendezvous {
                        buffer
                    } else {
                        buffer.max(1)
                    },
                }
            }
            Workload::Skynet if !power_of_ten(cli.n.get()) => {
                return Err(command.error(
                    ErrorKind::ValueValidation,
                    format!(
                        "skynet needs --n a power of ten (1, 10, 100, ...), got {}",
                        cli.n
                    ),
                ));
            }
            Workload::Skynet => Work::Skynet,
        };
        Ok(Args {
            work,
            n: cli.n.get(),
            iterations: cli.iterations.get(),
            warmup: Duration::from_millis(cli.warmup_ms),
        })
    }

    /// Primes (`chain`), runs the warm-up, then the iterations, and prints
    /// the JSON line. A run that fails (a thread that cannot be spawned) or
    /// a wrong priming answer ends the process with status 1 and one line on
    /// stderr.
    pub fn run(&self, args: &Args, mut iteration: impl FnMut(&Args) -> io::Result<Sample>) {
        let fail = |err: &dyn std::fmt::Display| -> ! {
            eprintln!("error: {err}");
            process::exit(1)
        };
        let report = self
            .measure(args, |args| {
                iteration(args).unwrap_or_else(|err| fail(&err))
            })
            .unwrap_or_else(|err| fail(&err));
        println!(
            "{}",
            serde_json::to_string(&report).expect("report serializes")
        );
    }

    /// What `run` prints: the priming, the warm-up and the iterations, each
    /// run being one call of `once` (which times itself). An error is a
    /// wrong priming answer.
    fn measure(
        &self,
        args: &Args,
        mut once: impl FnMut(&Args) -> Sample,
    ) -> Result<Report, String> {
        let primed = match args.work {
            Work::Chain => Some(prime(args, &mut once)?),
            _ => None,
        };
        let warmup = warm_up(args.warmup, WARMUP_RUNS_MAX, || once(args));
        let samples: Vec<_> = (0..args.iterations).map(|_| once(args)).collect();
        let (buffer, capacity) = match args.work {
            Work::Bounded { buffer, capacity } => {
                (Some(buffer), (capacity != buffer).then_some(capacity))
            }
            _ => (None, None),
        };
        let report = Report {
            workload: args.work.workload().name(),
            n: args.n,
            buffer,
            result: samples.last().expect("at least one iteration").result,
            results: samples.iter().map(|s| s.result).collect(),
            iter_ns: samples.iter().map(|s| nanos(s.elapsed)).collect(),
            warmup_ns: warmup.iter().map(|s| nanos(s.elapsed)).collect(),
            warmup_results: warmup.iter().map(|s| s.result).collect(),
            spawn_ns: samples[0].spawn.map(nanos),
            capacity,
            primed,
            runtime: self.label(),
        };
        Ok(report)
    }
}

/// The priming (docs/protocol.md, "Priming"): one chain of P = min(N, 1000)
/// links, run by the same code as the timed passes before the warm-up and
/// the iterations; its time is dropped. Returns P, or an error if its answer
/// is not P. The protocol asks it of every language so that a JIT's first
/// timed pass is not its compiler's; Rust compiles ahead of time, and its
/// figures do not move beyond the noise (README.md, "chain: priming").
fn prime(args: &Args, once: &mut impl FnMut(&Args) -> Sample) -> Result<usize, String> {
    let links = args.n.min(PRIME_LINKS_MAX);
    let answer = once(&Args { n: links, ..*args }).result;
    if answer != links as u64 {
        return Err(format!(
            "the priming chain of {links} links answered {answer}, want {links}"
        ));
    }
    Ok(links)
}

/// Runs `once` while the runs so far took less than `warmup` in all and
/// number fewer than `max_runs` (docs/protocol.md, `--warmup-ms`).
fn warm_up(warmup: Duration, max_runs: usize, mut once: impl FnMut() -> Sample) -> Vec<Sample> {
    let mut runs = Vec::new();
    let mut total = Duration::ZERO;
    while total < warmup && runs.len() < max_runs {
        let sample = once();
        total += sample.elapsed;
        runs.push(sample);
    }
    runs
}

/// Whether `n` is 1, 10, 100, ... (skynet's tree has 10 children a node).
pub fn power_of_ten(mut n: usize) -> bool {
    while n > 0 && n % 10 == 0 {
        n /= 10;
    }
    n == 1
}

/// clap's message up to its first blank line (dropping usage and tips),
/// joined into the protocol's single stderr line.
pub fn one_line(err: &clap::Error) -> String {
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
        allocator: SYSTEM_MALLOC,
        workloads: &[Workload::Sleep, Workload::Bounded, Workload::Skynet],
        rendezvous: false,
        after_help: None,
    };

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        let mut command = TEST.command();
        let matches = command
            .try_get_matches_from_mut(std::iter::once("bench").chain(argv.iter().copied()))?;
        TEST.args(&mut command, &matches)
    }

    #[test]
    fn takes_what_each_workload_needs() {
        let args = parse(&[
            "sleep",
            "--n",
            "5",
            "--iterations",
            "2",
            "--duration-ms",
            "7",
        ])
        .unwrap();
        assert_eq!((args.n, args.iterations), (5, 2));
        assert_eq!(args.warmup, Duration::ZERO);
        let duration = Duration::from_millis(7);
        assert_eq!(args.work, Work::Sleep { duration });
        let args = parse(&["bounded", "--n", "5", "--iterations", "1", "--buffer", "3"]).unwrap();
        let (buffer, capacity) = (3, 3);
        assert_eq!(args.work, Work::Bounded { buffer, capacity });
        for n in ["1", "10", "1000000"] {
            let args = parse(&["skynet", "--n", n, "--iterations", "1"]).unwrap();
            assert_eq!((args.work, args.n), (Work::Skynet, n.parse().unwrap()));
        }
    }

    #[test]
    fn takes_a_warmup_for_any_workload() {
        let args = parse(&[
            "bounded",
            "--n",
            "5",
            "--iterations",
            "1",
            "--buffer",
            "3",
            "--warmup-ms",
            "250",
        ])
        .unwrap();
        assert_eq!(args.warmup, Duration::from_millis(250));
        let args = parse(&[
            "skynet",
            "--n",
            "10",
            "--iterations",
            "1",
            "--warmup-ms",
            "0",
        ])
        .unwrap();
        assert_eq!(args.warmup, Duration::ZERO);
    }

    #[test]
    fn the_warmup_stops_at_its_time_or_its_run_cap() {
        let run = |ms| {
            move || Sample {
                result: 1,
                elapsed: Duration::from_millis(ms),
                spawn: None,
            }
        };
        assert_eq!(warm_up(Duration::from_millis(10), 100, run(4)).len(), 3);
        assert_eq!(warm_up(Duration::ZERO, 100, run(4)).len(), 0);
        assert_eq!(warm_up(Duration::from_secs(60), 3, run(1)).len(), 3);
    }

    /// A fake run: logs the N it was asked for and answers `answer(N)`,
    /// taking 1 ns more each call (so every time says which call it was).
    fn logged<'a>(
        log: &'a mut Vec<usize>,
        answer: impl Fn(usize) -> u64 + 'a,
    ) -> impl FnMut(&Args) -> Sample + 'a {
        move |args| {
            log.push(args.n);
            Sample {
                result: answer(args.n),
                elapsed: Duration::from_nanos(log.len() as u64),
                spawn: None,
            }
        }
    }

    fn chain_args(n: usize, iterations: usize, warmup: Duration) -> Args {
        Args {
            work: Work::Chain,
            n,
            iterations,
            warmup,
        }
    }

    #[test]
    fn chain_primes_min_n_and_1000_links_first_and_untimed() {
        for (n, primed) in [(5, 5), (1000, 1000), (2000, 1000)] {
            let mut log = Vec::new();
            let report = TEST
                .measure(
                    &chain_args(n, 2, Duration::ZERO),
                    logged(&mut log, |n| n as u64),
                )
                .unwrap();
            // The priming is the first run; the timed runs are the next two.
            assert_eq!(log, [primed, n, n], "N = {n}");
            assert_eq!(report.primed, Some(primed));
            assert_eq!(report.iter_ns, [2, 3], "N = {n}");
            assert_eq!(report.results, [n as u64; 2]);
            assert!(report.warmup_ns.is_empty());
        }
        // Before the warm-up too (its one run of 1 ns reaches W = 1 ns).
        let mut log = Vec::new();
        let args = chain_args(2000, 2, Duration::from_nanos(1));
        let report = TEST.measure(&args, logged(&mut log, |n| n as u64)).unwrap();
        assert_eq!(log, [1000, 2000, 2000, 2000]);
        assert_eq!((report.warmup_ns, report.iter_ns), (vec![2], vec![3, 4]));
        assert_eq!(report.warmup_results, [2000]);
        let json = serde_json::to_value(
            TEST.measure(
                &chain_args(5, 1, Duration::ZERO),
                logged(&mut Vec::new(), |n| n as u64),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(json["primed"], 5);
    }

    #[test]
    fn only_chain_primes() {
        let args = Args {
            work: Work::Skynet,
            n: 10,
            iterations: 1,
            warmup: Duration::ZERO,
        };
        let mut log = Vec::new();
        let report = TEST.measure(&args, logged(&mut log, |_| 45)).unwrap();
        assert_eq!(log, [10]);
        assert!(
            serde_json::to_value(report)
                .unwrap()
                .get("primed")
                .is_none()
        );
    }

    #[test]
    fn a_wrong_priming_answer_is_an_error_and_runs_nothing_more() {
        let mut log = Vec::new();
        let err = TEST
            .measure(
                &chain_args(2000, 2, Duration::from_millis(5)),
                logged(&mut log, |n| n as u64 - 1),
            )
            .err()
            .expect("a wrong priming answer fails");
        assert!(err.contains("priming") && !err.contains('\n'), "{err}");
        assert_eq!(log, [1000]);
    }

    #[test]
    fn powers_of_ten() {
        for n in [1, 10, 100, 1_000_000, 10_000_000_000] {
            assert!(power_of_ten(n), "{n}");
        }
        for n in [0, 2, 9, 11, 20, 101, 110, 1001, 999_999] {
            assert!(!power_of_ten(n), "{n}");
        }
    }

    #[test]
    fn buffer_zero_falls_back_to_capacity_one_without_rendezvous() {
        let args = parse(&["bounded", "--n", "5", "--iterations", "1", "--buffer", "0"]).unwrap();
        let (buffer, capacity) = (0, 1);
        assert_eq!(args.work, Work::Bounded { buffer, capacity });
    }

    #[test]
    fn rejects_bad_arguments_in_one_line() {
        for request in [
            "",
            "sleep",
            "sleep --n 3 --duration-ms 5",
            "sleep --n 3 --iterations 1",
            "sleep --n 3 --iterations 1 --duration-ms 0",
            "bounded --n 3 --iterations 1",
            "bounded --n 3 --iterations 1 --buffer -1",
            "bounded --n 0 --iterations 1 --buffer 1",
            "bounded --n 3 --iterations 0 --buffer 1",
            "bounded --n x --iterations 1 --buffer 1",
            "chain --n 3 --iterations 1",
            "skynet --n 20 --iterations 1",
            "skynet --n 2 --iterations 1",
            "skynet --n 1001 --iterations 1",
            "spin --n 3 --iterations 1",
            "skynet --n 10 --iterations 1 --warmup-ms -1",
            "skynet --n 10 --iterations 1 --warmup-ms x",
            "skynet --n 10 --iterations 1 --warmup-ms",
        ] {
            let argv: Vec<&str> = request.split_whitespace().collect();
            let err = parse(&argv)
                .err()
                .unwrap_or_else(|| panic!("accepted {argv:?}"));
            let line = one_line(&err);
            assert!(
                line.starts_with("error: ") && !line.contains('\n'),
                "{line}"
            );
        }
    }
}
