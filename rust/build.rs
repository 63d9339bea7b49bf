//! Exposes the locked versions of the runtime crates and of rustc as
//! compile-time environment variables, so each binary can name its runtime
//! exactly (`tokio 1.54.1, rustc 1.95.0`) in its JSON output and `--version`.

use std::process::Command;
use std::{env, fs};

const CRATES: [(&str, &str); 9] = [
    ("tokio", "TOKIO_VERSION"),
    ("hyper", "HYPER_VERSION"),
    ("async-std", "ASYNC_STD_VERSION"),
    ("futures", "FUTURES_VERSION"),
    ("smol", "SMOL_VERSION"),
    ("async-executor", "ASYNC_EXECUTOR_VERSION"),
    ("async-io", "ASYNC_IO_VERSION"),
    ("mimalloc", "MIMALLOC_VERSION"),
    ("libmimalloc-sys", "LIBMIMALLOC_SYS_VERSION"),
];

fn main() {
    println!("cargo::rerun-if-changed=Cargo.lock");
    let lock =
        fs::read_to_string("Cargo.lock").expect("Cargo.lock is committed next to Cargo.toml");
    // hyper is rust-tokio's `serve` alone: a build without the feature
    // `serve` (another tokio release, versions.py) has none.
    let serve = env::var_os("CARGO_FEATURE_SERVE").is_some();
    for (name, var) in CRATES {
        if name == "hyper" && !serve {
            continue;
        }
        let version = locked_version(&lock, name)
            .unwrap_or_else(|| panic!("{name} is missing from Cargo.lock"));
        println!("cargo::rustc-env={var}={version}");
    }
    let rustc = env::var("RUSTC").expect("cargo sets RUSTC");
    let output = Command::new(rustc)
        .arg("--version")
        .output()
        .expect("rustc runs");
    let line = String::from_utf8(output.stdout).expect("rustc prints UTF-8");
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = line
        .split_whitespace()
        .nth(1)
        .expect("rustc prints its version");
    println!("cargo::rustc-env=RUSTC_VERSION={version}");
}

/// The `version` line that follows `name = "<name>"` in a `[[package]]` entry.
fn locked_version<'a>(lock: &'a str, name: &str) -> Option<&'a str> {
    let header = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    lines.find(|line| *line == header)?;
    lines
        .next()?
        .strip_prefix("version = \"")?
        .strip_suffix('"')
}
