//! Runs the built binaries the way the harness does (docs/protocol.md,
//! "Invocation" and "Output"): one JSON line on stdout for a good request;
//! usage on stdout and exit 0 for --help; exit 2, one stderr line and nothing
//! on stdout for every bad one.

use std::process::{Command, Output};

use serde_json::Value;

/// Each binary and the workloads it declares in impls.toml.
const BINARIES: [(&str, &[&str]); 6] = [
    (
        env!("CARGO_BIN_EXE_rust-tokio"),
        &["sleep", "chain", "bounded", "skynet"],
    ),
    (
        env!("CARGO_BIN_EXE_rust-tokio-glibc"),
        &["sleep", "chain", "bounded", "skynet"],
    ),
    (
        env!("CARGO_BIN_EXE_rust-async-std"),
        &["sleep", "chain", "bounded", "skynet"],
    ),
    (
        env!("CARGO_BIN_EXE_rust-smol"),
        &["sleep", "chain", "bounded", "skynet"],
    ),
    (env!("CARGO_BIN_EXE_rust-futures"), &["sleep"]),
    (
        env!("CARGO_BIN_EXE_rust-threads"),
        &["sleep", "chain", "bounded"],
    ),
];

const ALL_WORKLOADS: [&str; 5] = ["sleep", "chain", "chain-await", "bounded", "skynet"];

fn run(binary: &str, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .output()
        .expect("the binary starts")
}

fn report(binary: &str, args: &[&str]) -> Value {
    let output = run(binary, args);
    assert!(output.status.success(), "{binary} {args:?}: {output:?}");
    assert!(output.stderr.is_empty(), "{binary} {args:?}: {output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "{binary} {args:?} printed {stdout:?}"
    );
    serde_json::from_str(&stdout).unwrap()
}

/// A complete, valid request at a tiny size.
fn good(workload: &str) -> Vec<&str> {
    let mut args = vec![workload, "--n", "10", "--iterations", "1"];
    match workload {
        "bounded" => args.extend(["--buffer", "1"]),
        "sleep" => args.extend(["--duration-ms", "10"]),
        _ => {}
    }
    args
}

/// A case's args for workload `w`: "{w}" its name, "{required}" its other
/// required options (spliced).
fn expand(table: &Value, args: &Value, w: &str) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args.as_array().unwrap() {
        match arg.as_str().unwrap() {
            "{required}" => out.extend(
                table["required"][w]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string()),
            ),
            "{w}" => out.push(w.to_string()),
            a => out.push(a.to_string()),
        }
    }
    out
}

/// docs/protocol.md's table of bad argument lists for a binary, W being its
/// first workload: the one table (docs/protocol-bad-input.json, which
/// harness/tests/test_conformance.py runs too), then ours.
fn bad_cases(workloads: &[&'static str]) -> Vec<Vec<String>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/protocol-bad-input.json"
    );
    let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let w = workloads[0];
    let mut cases = Vec::new();
    for case in table["cases"].as_array().unwrap() {
        match case["when"].as_str() {
            None | Some("declared") => cases.push(expand(&table, &case["args"], w)),
            Some("undeclared") => {
                for other in ALL_WORKLOADS.iter().filter(|o| !workloads.contains(o)) {
                    cases.push(expand(&table, &case["args"], other));
                }
            }
            Some(when) if workloads.contains(&when) => cases.push(expand(&table, &case["args"], w)),
            Some(_) => {}
        }
    }
    let mut ours = vec![[&good(w)[..], &["--warmup-ms", "1.5"]].concat()];
    if workloads.contains(&"bounded") {
        ours.push(vec![
            "bounded",
            "--n",
            "10",
            "--iterations",
            "1",
            "--buffer",
            "x",
        ]);
    }
    if workloads.contains(&"skynet") {
        // N must be a power of ten: 10 children a node.
        for n in ["2", "20", "1001"] {
            ours.push(vec!["skynet", "--n", n, "--iterations", "1"]);
        }
    }
    cases.extend(
        ours.into_iter()
            .map(|case| case.into_iter().map(String::from).collect()),
    );
    cases
}

#[test]
fn bad_arguments_exit_2_with_one_line_and_no_stdout() {
    for (binary, workloads) in BINARIES {
        for case in bad_cases(workloads) {
            let args: Vec<&str> = case.iter().map(String::as_str).collect();
            let output = run(binary, &args);
            assert_eq!(output.status.code(), Some(2), "{binary} {args:?}");
            assert!(output.stdout.is_empty(), "{binary} {args:?}");
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(stderr.lines().count(), 1, "{binary} {args:?}: {stderr:?}");
            assert!(
                stderr.starts_with("error: "),
                "{binary} {args:?}: {stderr:?}"
            );
        }
    }
}

#[test]
fn help_prints_usage_on_stdout_and_exits_0() {
    for (binary, workloads) in BINARIES {
        for flag in ["--help", "-h"] {
            let output = run(binary, &[flag]);
            assert!(output.status.success(), "{binary} {flag}: {output:?}");
            assert!(output.stderr.is_empty(), "{binary} {flag}: {output:?}");
            let stdout = String::from_utf8(output.stdout).unwrap();
            assert!(stdout.starts_with("Usage: "), "{binary} {flag}: {stdout}");
            for w in workloads {
                assert!(stdout.contains(w), "{binary} {flag}: {stdout}");
            }
        }
    }
}

#[test]
fn every_declared_workload_answers_with_one_json_line() {
    for (binary, workloads) in BINARIES {
        for w in workloads.iter() {
            let json = report(binary, &good(w));
            assert_eq!(json["workload"], *w);
            assert_eq!(json["n"], 10);
            assert_eq!(json["results"].as_array().unwrap().len(), 1);
            assert!(json["runtime"].is_string());
        }
    }
}

#[test]
fn sleep_reports_its_spawn_time_and_lasts_one_sleep() {
    for (binary, _) in BINARIES {
        let args = [
            "sleep",
            "--n",
            "100",
            "--iterations",
            "1",
            "--duration-ms",
            "50",
        ];
        let json = report(binary, &args);
        assert_eq!(json["result"], 100);
        assert_eq!(json["buffer"], Value::Null);
        assert!(json["iter_ns"][0].as_u64().unwrap() >= 50_000_000);
        assert!(json["spawn_ns"].is_u64());
    }
}

#[test]
fn chain_and_bounded_report_every_iteration() {
    for (binary, workloads) in BINARIES {
        if !workloads.contains(&"chain") {
            continue;
        }
        let json = report(binary, &["chain", "--n", "100", "--iterations", "3"]);
        assert_eq!(json["results"], serde_json::json!([100, 100, 100]));
        assert_eq!(json["iter_ns"].as_array().unwrap().len(), 3);
        assert_eq!(json["buffer"], Value::Null);

        for buffer in ["0", "1", "1000"] {
            let args = [
                "bounded",
                "--n",
                "100",
                "--buffer",
                buffer,
                "--iterations",
                "2",
            ];
            let json = report(binary, &args);
            assert_eq!(json["buffer"], buffer.parse::<u64>().unwrap());
            assert_eq!(json["results"], serde_json::json!([4950, 4950]));
            // Only std's sync_channel has a rendezvous mode.
            let expected = if buffer == "0" && !binary.ends_with("rust-threads") {
                1.into()
            } else {
                Value::Null
            };
            assert_eq!(json["capacity"], expected, "{binary} {args:?}");
        }
    }
}

#[test]
fn chain_primes_min_n_and_1000_links_apart_from_the_iterations() {
    for (binary, workloads) in BINARIES {
        for w in workloads.iter() {
            let json = report(binary, &good(w));
            let primed = if *w == "chain" {
                10.into()
            } else {
                Value::Null
            };
            assert_eq!(json["primed"], primed, "{binary} {w}: {json}");
        }
        if !workloads.contains(&"chain") {
            continue;
        }
        for (n, primed) in [(5, 5), (2000, 1000)] {
            let arg = n.to_string();
            let json = report(binary, &["chain", "--n", &arg, "--iterations", "2"]);
            assert_eq!(json["primed"], primed, "{binary} {n}: {json}");
            assert_eq!(json["results"], serde_json::json!([n, n]), "{binary} {n}");
            assert_eq!(json["iter_ns"].as_array().unwrap().len(), 2, "{binary} {n}");
            assert_eq!(json["warmup_ns"], serde_json::json!([]), "{binary} {n}");
        }
    }
}

#[test]
fn the_warmup_runs_until_its_time_is_up_and_apart_from_the_iterations() {
    for (binary, workloads) in BINARIES {
        let workload = workloads[workloads.len() - 1];
        let args = [&good(workload)[..], &["--warmup-ms", "30"]].concat();
        let json = report(binary, &args);
        let times: Vec<u64> = serde_json::from_value(json["warmup_ns"].clone()).unwrap();
        let answers = json["warmup_results"].as_array().unwrap();
        assert!(
            !times.is_empty() && answers.len() == times.len(),
            "{binary}: {json}"
        );
        assert!(
            answers.iter().all(|a| *a == json["result"]),
            "{binary}: {json}"
        );
        let total: u64 = times.iter().sum();
        // The last run is the one that reached 30 ms.
        assert!(total >= 30_000_000, "{binary}: {json}");
        assert!(
            total - times[times.len() - 1] < 30_000_000,
            "{binary}: {json}"
        );
        assert_eq!(json["iter_ns"].as_array().unwrap().len(), 1);

        let json = report(binary, &good(workload));
        assert_eq!(json["warmup_ns"], serde_json::json!([]), "{binary}");
        assert_eq!(json["warmup_results"], serde_json::json!([]), "{binary}");
    }
}

#[test]
fn skynet_sums_the_leaves_of_every_iteration() {
    for (binary, workloads) in BINARIES {
        if !workloads.contains(&"skynet") {
            continue;
        }
        for (n, sum) in [(1, 0), (10, 45), (10_000, 49_995_000)] {
            let n = n.to_string();
            let json = report(binary, &["skynet", "--n", &n, "--iterations", "2"]);
            assert_eq!(
                json["results"],
                serde_json::json!([sum, sum]),
                "{binary} {n}"
            );
            assert_eq!(json["iter_ns"].as_array().unwrap().len(), 2);
            assert_eq!(json["buffer"], Value::Null);
        }
    }
}

#[test]
fn version_prints_the_runtime_label_with_the_allocator() {
    let label = |binary: &str| {
        let output = run(binary, &["--version"]);
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let tokio = label(env!("CARGO_BIN_EXE_rust-tokio"));
    assert!(
        tokio.starts_with("tokio 1.") && tokio.contains(", mimalloc 0."),
        "{tokio}"
    );
    let glibc = label(env!("CARGO_BIN_EXE_rust-tokio-glibc"));
    assert!(
        glibc.starts_with("tokio 1.") && glibc.contains("system malloc (glibc)"),
        "{glibc}"
    );
}
