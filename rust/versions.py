"""Build one Rust implementation against another release of its crate
(IMPL@VERSION, the install command of [impl.versions] in impls.toml).

    python versions.py IMPL CRATE VERSION CACHE TARGET
    python versions.py IMPL CRATE path:DIR CACHE TARGET

With path:DIR (IMPL@path:DIR, [impl.versions] path_install), DIR is a local
checkout of CRATE, or of a workspace holding it in DIR/CRATE: the manifest
pins CRATE to DIR's own version and replaces it with DIR through
`[patch.crates-io]`, so that every crate of the graph that uses CRATE uses
DIR's (hyper's tokio too), the program unchanged.

The same program source as the stock build, copied into CACHE (everything
but target/), with one change to the manifest: CRATE's requirement becomes
`=VERSION`. Cargo.lock is copied too and cargo updates it for that change
alone (`cargo update --workspace`, not --locked): every other crate stays at
its locked version unless the release needs another. Then only IMPL's
binary is built, `cargo build --release --bin IMPL --target-dir TARGET`,
and copied to CACHE/target/release/IMPL; build.rs reads CACHE/Cargo.lock,
so the binary's --version names the release. TARGET is one folder per
crate release (impls.toml), shared by the implementations built against it:
rust-tokio, rust-tokio-glibc and rust-futures at one tokio release compile
its crate graph once, not three times (cargo keeps each build's crates
apart by their features and source, and locks the folder while it builds).

rust-tokio's HTTP server (`serve`, the cargo feature of that name: hyper,
hyper-util, http-body-util; its own binary, rust-tokio-serve, copied beside
rust-tokio) is built when its crates resolve with the release: hyper-util needs tokio >= 1.13, so an older release is built
without it, and `.workloads` in CACHE lists what that build has (the
harness skips its http rows, saying cargo's reason). A release that
resolves but does not compile fails, with or without the server. Every
other implementation's release is built without it, as none of those
binaries has a server. rust-futures
is versioned by tokio (its sleep futures and timer), not by futures: every
futures-util release before 0.3.31 (where join_all lives) is yanked, and the
locked graph needs >= 0.3.31 anyway, so `futures = "=V"` would still build
0.3.34's join_all.

Lines on stderr that start with "rust:" are shown to the user; cargo's
output goes to the build log; a release that cannot be resolved or built
exits 1 with the first error line on stderr (cargo's or rustc's own
`error[E...]` line).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVE_IMPL = "rust-tokio"  # the one implementation with a server
SERVE_BINARY = "rust-tokio-serve"  # the server itself, which `rust-tokio serve` execs
PROGRESS = re.compile(r"\s*(Compiling|Downloading|Downloaded|Updating|Locking|Adding|"
                      r"Upgrading|Downgrading|Removing|Fetching|Building|Finished)\b")
KEY = re.compile(r"[A-Za-z0-9_-]+")
# Crates of other platforms in Cargo.lock, never downloaded on Linux.
OTHER_OS = re.compile(r"windows|winapi|wasm|js-sys$|web-sys$|gloo-|hermit-abi$|redox|wasi$")


def say(text: str) -> None:
    """A line for the user (the harness shows stderr lines that start with
    "rust:"); never with ": error:" in it, which would pass for the error."""
    print(f"rust: {text.replace(': error:', ':')}", file=sys.stderr, flush=True)


# -- the manifest ------------------------------------------------------------

def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def toml_key(key: str) -> str:
    return key if KEY.fullmatch(key) else json.dumps(key)


def dump(manifest: dict) -> str:
    """Cargo.toml's shapes only: tables of values and arrays of tables."""
    out = ["# Written by versions.py from the project's Cargo.toml (one release of one crate)."]
    for name, table in manifest.items():
        tables = table if isinstance(table, list) else [table]
        for entry in tables:
            out.append(f"\n[[{name}]]" if isinstance(table, list) else f"\n[{name}]")
            out += [f"{toml_key(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(out) + "\n"


def local_crate(crate: str, root: Path) -> tuple[Path, str]:
    """(the folder of CRATE's manifest, its version) in a checkout of the crate
    or of a workspace holding it in root/CRATE; ValueError says why not."""
    for folder in (root, root / crate):
        try:
            package = tomllib.loads((folder / "Cargo.toml").read_text()).get("package", {})
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if package.get("name") == crate and isinstance(package.get("version"), str):
            return folder, package["version"]
    raise ValueError(f"error: {root} holds no {crate} crate (no Cargo.toml naming it, there or in {crate}/)")


def release_manifest(stock: dict, crate: str, version: str, serve: bool,
                     local: Path | None = None) -> dict:
    """The stock manifest with CRATE at =VERSION, and with or without serve;
    with local, CRATE comes from that folder (VERSION being its own)."""
    manifest = json.loads(json.dumps(stock))  # a deep copy
    if local is not None:
        manifest["patch"] = {"crates-io": {crate: {"path": str(local)}}}
    deps = manifest["dependencies"]
    pin = f"={version}"
    if isinstance(deps[crate], str):
        deps[crate] = pin
    else:
        deps[crate]["version"] = pin
    if not serve:
        features = manifest["features"]
        for item in features["serve"]:
            if item.startswith("dep:"):
                deps.pop(item[4:])
        features["default"] = []
        features["serve"] = []
    return manifest


# -- Cargo.lock --------------------------------------------------------------

def packages(lock: Path) -> set[tuple[str, str]]:
    """The crates.io packages of a Cargo.lock, as (name, version)."""
    doc = tomllib.loads(lock.read_text())
    return {(p["name"], p["version"]) for p in doc.get("package", [])
            if p.get("source", "").startswith("registry+")}


def downloaded(name: str, version: str) -> bool:
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")  # where cargo keeps them
    return any(home.glob(f"registry/cache/*/{name}-{version}.crate"))


def crate_size(name: str, version: str) -> int:
    url = f"https://static.crates.io/crates/{name}/{name}-{version}.crate"
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "concurrency-bench"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.headers.get("Content-Length") or 0)
    except (OSError, ValueError):
        return 0


def describe_changes(stock: set, new: set, crate: str) -> None:
    """One line: which crates differ from the stock build, and what is to be
    downloaded (those not in ~/.cargo yet), from where, how big."""
    added = sorted(new - stock)
    others = [f"{n} {v}" for n, v in added if n != crate and not OTHER_OS.match(n)]
    changed = (f"as the stock Cargo.lock, plus {', '.join(others[:6])}"
               + (f" and {len(others) - 6} more" if len(others) > 6 else "")) if others else \
        "as the stock Cargo.lock"
    # Cargo.lock holds every platform's crates; cargo downloads this one's.
    missing = [(n, v) for n, v in added if not downloaded(n, v) and not OTHER_OS.match(n)]
    if missing:
        size = sum(crate_size(n, v) for n, v in missing)
        fetch = (f"at most {len(missing)} crate{'s' if len(missing) > 1 else ''} "
                 f"({size / 1e6:.1f} MB) to download from crates.io into ~/.cargo, "
                 f"those this platform builds")
    else:
        fetch = "nothing more to download (~/.cargo has every crate)"
    say(f"the other crates {changed}; {fetch}")


# -- cargo -------------------------------------------------------------------

def cargo(args: list[str], cache: Path, quiet: bool) -> tuple[int, str]:
    """Run cargo in CACHE. Not quiet: stderr passes through (the harness logs
    it and shows its progress lines), returns (code, ""). Quiet (an attempt
    that may fail without failing the install): its progress lines pass
    through, everything goes to stdout (the log), returns (code, stderr)."""
    if not quiet:
        return subprocess.run(["cargo", *args], cwd=cache).returncode, ""
    proc = subprocess.Popen(["cargo", *args], cwd=cache, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        sys.stdout.write(line)
        if PROGRESS.match(line):
            sys.stderr.write(line)
    sys.stdout.flush()
    return proc.wait(), "".join(lines)


def resolution_error(text: str, crate: str, version: str) -> str:
    """Cargo's reason a release cannot be resolved, as one error line: the
    line that says why (a missing feature, a conflict), else cargo's first."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((line for line in lines if line.startswith("error")), lines[-1] if lines else "")
    reason = next((line for line in lines if "does not have" in line), None)
    if reason is None:
        reason = first.removeprefix("error: ").rstrip(".")
        by = next((line.lstrip(". ") for line in lines if "required by package" in line), None)
        reason += f", {by}" if by else ""
    return f"error: {crate} {version}: {reason}"


def attempt(impl: str, crate: str, version: str, cache: Path, target: Path, stock: dict,
            stock_lock: set, serve: bool, last: bool,
            local: Path | None = None) -> tuple[bool, str, bool]:
    """Resolve and build once: (built, why not, resolved). `last`: the final
    attempt, whose errors go to stderr (the row's error line)."""
    (cache / "Cargo.toml").write_text(dump(release_manifest(stock, crate, version, serve, local)))
    shutil.copy2(HERE / "Cargo.lock", cache / "Cargo.lock")
    code, text = cargo(["update", "--workspace"], cache, quiet=True)
    if code != 0:
        error = resolution_error(text, crate, version)
        if last:
            print(error, file=sys.stderr, flush=True)
        return False, error, False
    describe_changes(stock_lock, packages(cache / "Cargo.lock"), crate)
    # with the server, its own binary too (rust-tokio serve execs it, beside itself)
    binaries = [impl] + ([SERVE_BINARY] if serve and impl == SERVE_IMPL else [])
    build = ["build", "--release", *(a for b in binaries for a in ("--bin", b)),
             "--target-dir", str(target)]
    if not serve:
        build.append("--no-default-features")
    code, text = cargo(build, cache, quiet=not last)
    if code != 0:
        lines = [line.strip() for line in text.splitlines()]
        return False, next((line for line in lines if line.startswith("error")), "the build failed"), True
    # impls.toml runs CACHE's copy: the shared folder's binary is the next build's to replace
    (cache / "target" / "release").mkdir(parents=True, exist_ok=True)
    for binary in binaries:
        shutil.copy2(target / "release" / binary, cache / "target" / "release" / binary)
    return True, "", True


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print("usage: versions.py IMPL CRATE VERSION CACHE TARGET", file=sys.stderr)
        return 2
    impl, crate, version = argv[0], argv[1], argv[2]
    cache, target = Path(argv[3]).resolve(), Path(argv[4]).resolve()
    local = None
    if version.startswith("path:"):
        try:
            local, version = local_crate(crate, Path(version[5:]))
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 1
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE, cache, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("target", "__pycache__"))
    stock = tomllib.loads((HERE / "Cargo.toml").read_text())
    stock_lock = packages(HERE / "Cargo.lock")
    against = f"{crate} {version} from {local}" if local else f"{crate} ={version}"
    say(f"{impl} against {against}: the project's sources and Cargo.lock copied "
        f"into {cache}, cargo resolves the change and builds that binary alone in {target}")
    why = ""
    if impl == SERVE_IMPL:
        built, why, resolved = attempt(impl, crate, version, cache, target, stock, stock_lock, serve=True,
                                       last=False, local=local)
        if built:
            return 0
        if resolved:  # the server's crates resolve: the release itself does not compile
            print(why, file=sys.stderr, flush=True)
            return 1
        why = why.removeprefix("error: ")
        say(f"{impl}@{version} is built without `serve` (its http rows are skipped): with it, {why}")
    built, _, _ = attempt(impl, crate, version, cache, target, stock, stock_lock, serve=False, last=True,
                          local=local)
    if built and why:
        # the harness skips the workloads a release's build lacks (builder.release_lacks)
        declared = next(e for e in tomllib.loads((HERE / "impls.toml").read_text())["impl"]
                        if e["id"] == impl)["workloads"]
        has = " ".join(w for w in declared if w != "http")
        (cache / ".workloads").write_text(f"{has} # built without the HTTP server: {why}\n")
    return 0 if built else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
