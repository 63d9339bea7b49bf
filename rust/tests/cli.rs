//! Runs the built binaries the way the harness does: one JSON line on
//! stdout for a good request, exit 2 and one stderr line for a bad one.

use std::process::{Command, Output};

use serde_json::Value;

const BINARIES: [&str; 4] = [
    env!("CARGO_BIN_EXE_rust-tokio"),
    env!("CARGO_BIN_EXE_rust-async-std"),
    env!("CARGO_BIN_EXE_rust-futures"),
    env!("CARGO_BIN_EXE_rust-threads"),
];

fn run(binary: &str, args: &[&str]) -> Output {
    Command::new(binary)
        .args(args)
        .output()
        .expect("the binary starts")
}

fn report(binary: &str, args: &[&str]) -> Value {
    let output = run(binary, args);
    assert!(output.status.success(), "{binary} {args:?}: {output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "{binary} {args:?} printed {stdout:?}"
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn sleep_reports_one_json_line() {
    for binary in BINARIES {
        let json = report(binary, &["sleep", "--n", "100", "--duration-ms", "50"]);
        assert_eq!(json["workload"], "sleep");
        assert_eq!(json["result"], 100);
        assert_eq!(json["buffer"], Value::Null);
        assert!(json["iter_ns"][0].as_u64().unwrap() >= 50_000_000);
        assert!(json["spawn_ns"].is_u64());
        assert!(json["runtime"].is_string());
    }
}

#[test]
fn chain_and_bounded_report_every_iteration() {
    for binary in BINARIES.iter().filter(|b| !b.ends_with("rust-futures")) {
        let json = report(binary, &["chain", "--n", "100", "--iterations", "3"]);
        assert_eq!(json["results"], serde_json::json!([100, 100, 100]));
        assert_eq!(json["iter_ns"].as_array().unwrap().len(), 3);

        let json = report(binary, &["bounded", "--n", "100", "--buffer", "0"]);
        assert_eq!(json["buffer"], 0);
        assert_eq!(json["result"], 4950);
        assert_eq!(json["results"].as_array().unwrap().len(), 10);
        // Only std's sync_channel has a rendezvous mode.
        let expected = if binary.ends_with("rust-threads") {
            Value::Null
        } else {
            1.into()
        };
        assert_eq!(json["capacity"], expected);
    }
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for binary in BINARIES {
        for args in [
            &["sleep"][..],
            &["sleep", "--n", "0"],
            &["bounded", "--n", "3", "--buffer", "-1"],
            &["sleep", "--n", "3", "--frobnicate"],
        ] {
            let output = run(binary, args);
            assert_eq!(output.status.code(), Some(2), "{binary} {args:?}");
            assert!(output.stdout.is_empty());
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(stderr.lines().count(), 1, "{binary} {args:?}: {stderr:?}");
        }
    }
    let output = run(env!("CARGO_BIN_EXE_rust-futures"), &["chain", "--n", "3"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn version_prints_the_runtime_label() {
    let output = run(env!("CARGO_BIN_EXE_rust-tokio"), &["--version"]);
    assert!(output.status.success());
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .starts_with("tokio 1.")
    );
}
