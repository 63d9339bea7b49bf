"""Command line: python -m harness {run,list,build,test,report,plot,compare}."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NoReturn, Sequence

from . import ROOT, UsageError
from .builder import build_language
from .envinfo import git, host, ram_bytes, redact
from .launcher import LauncherError, ensure_launcher
from .progress import Progress, fmt_duration
from .registry import Impl, RegistryError, load_registry, program_env, select
from .storage import RunStore, new_run_id, point_latest, utc_now
from .suite import Part, Settings, estimate_s, execute, history_key, load_history, plan
from .workloads import WORKLOADS

EPILOG = """examples:
  python -m harness list
  python -m harness run --impl go --workload sleep,chain,bounded --n 1000,100000 --buffer 1,100
  python -m harness run --impl rust --n 1000000 --workload sleep --repeat 1
  python -m harness report results/latest
  python -m harness compare results/OLD results/NEW
"""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input in one line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"harness: error: {message} (see --help)\n")


def int_list(text: str, name: str, minimum: int) -> list[int]:
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            value = int(part)
        except ValueError:
            raise UsageError(f"{name}: {part!r} is not an integer") from None
        if value < minimum:
            kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise UsageError(f"{name}: {value} must be {kind}")
        values.append(value)
    if len(set(values)) != len(values):
        raise UsageError(f"{name}: repeated value in {text!r}")
    return values


def name_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$", re.I)


def parse_size(text: str) -> int:
    """'8G', '512M', '64MiB', '1048576' -> bytes (powers of 1024)."""
    m = SIZE.match(text.strip())
    if not m:
        raise UsageError(f"--max-rss: {text!r} is not a size like 512M or 8G")
    value = float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " ")
    if value < 1:
        raise UsageError("--max-rss must be positive")
    return int(value)


def positive(value: float, name: str) -> float:
    if not value > 0:
        raise UsageError(f"{name} must be positive")
    return value


def relative(path: Path) -> str:
    """A path as the user would type it from the repository."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def build_parser() -> Parser:
    parser = Parser(prog="python -m harness", description=(
        "Benchmark harness for concurrency runtimes: runs each implementation's built "
        "program, measures wall time, CPU and peak RSS, validates its answer and records "
        "every run (see docs/protocol.md)."), epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    run = sub.add_parser("run", help="build, run and record a suite of benchmarks")
    run.add_argument("--impl", default="all",
                     help="comma-separated implementation ids or language names, or 'all' (default)")
    run.add_argument("--suite", default=None,
                     help="a named suite from harness/suites.toml (default, quick); the options "
                          "below override its workloads, sizes, repeats and sleep time")
    run.add_argument("--workload", default=None,
                     help=f"comma-separated workloads ({', '.join(WORKLOADS)}) or 'all' (default)")
    run.add_argument("--n", default=None, help="comma-separated task counts (default 1000)")
    run.add_argument("--buffer", default=None,
                     help="comma-separated channel capacities for bounded, 0 = rendezvous (default 1)")
    run.add_argument("--repeat", type=int, default=None,
                     help="process runs per configuration (default 3)")
    run.add_argument("--duration-ms", type=int, default=None,
                     help="sleep time of each task in the sleep workload (default 10000)")
    run.add_argument("--iterations", type=int, default=None,
                     help="in-process iterations (default: per workload, chain 2, bounded 10)")
    run.add_argument("--timeout", type=float, default=300.0,
                     help="seconds before a run is killed and recorded as timeout (default 300)")
    run.add_argument("--max-rss", default=None,
                     help="RSS above which a run is killed and recorded as oom (default 80%% of RAM)")
    run.add_argument("--sample-interval-ms", type=float, default=10.0,
                     help="RSS and thread-count sampling period (default 10)")
    run.add_argument("--out", default=str(ROOT / "results"),
                     help="results folder; each run writes OUT/<run-id>/ and OUT/latest "
                          "(default: results/ in the repository)")
    run.add_argument("--resume", action="store_true",
                     help="continue the newest run in OUT, skipping rows already ok")
    run.add_argument("--no-build", action="store_true", help="use the programs as already built")
    run.add_argument("--no-report", action="store_true", help="do not write report.md and plots")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan and its estimated duration, run nothing")

    lst = sub.add_parser("list", help="implementations, workloads and toolchains")
    lst.add_argument("--impl", default="all")

    bld = sub.add_parser("build", help="set up and build implementations")
    bld.add_argument("--impl", default="all")

    tst = sub.add_parser("test", help="run each language's own unit tests (after building)")
    tst.add_argument("--impl", default="all")

    for name, text in (("report", "write report.md, summary.csv, results.json and plots"),
                       ("plot", "redraw the plots of a run")):
        p = sub.add_parser(name, help=text)
        p.add_argument("run_dir", nargs="?", default=str(ROOT / "results" / "latest"))

    cmp_ = sub.add_parser("compare", help="ratios between two runs, per configuration")
    cmp_.add_argument("old")
    cmp_.add_argument("new")
    return parser


def resolve_impls(text: str) -> list[Impl]:
    impls = load_registry()
    names = name_list(text)
    if not names:
        raise UsageError("--impl is empty")
    return impls if names == ["all"] else select(impls, names)


def load_suites() -> dict[str, dict]:
    return tomllib.loads((Path(__file__).parent / "suites.toml").read_text())


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the options; with --suite, the suite supplies the
    workloads, sizes, repeat count and sleep time unless an option overrides them."""
    suite: dict = {}
    if args.suite:
        suites = load_suites()
        if args.suite not in suites:
            raise UsageError(f"unknown suite {args.suite!r} (known: {', '.join(suites)})")
        suite = suites[args.suite]
    workloads = None if args.workload in (None, "all") else name_list(args.workload)
    for w in workloads or []:
        if w not in WORKLOADS:
            raise UsageError(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)})")
    ns = int_list(args.n, "--n", 1) if args.n is not None else None
    buffers = int_list(args.buffer, "--buffer", 0) if args.buffer is not None else None
    if suite:
        # An option given on the command line overrides every part's own value.
        parts = [Part(workloads=[w for w in part["workloads"] if workloads is None or w in workloads],
                      ns=ns or part["n"], buffers=buffers or part.get("buffers", [1]),
                      repeat=None if args.repeat is not None else part.get("repeat"),
                      duration_ms=None if args.duration_ms is not None else part.get("duration_ms"),
                      iterations=None if args.iterations is not None else part.get("iterations"))
                 for part in suite["part"]]
    else:
        parts = [Part(workloads or list(WORKLOADS), ns or [1000], buffers or [1])]
    repeat = args.repeat if args.repeat is not None else suite.get("repeat", 3)
    duration_ms = args.duration_ms if args.duration_ms is not None else suite.get("duration_ms", 10000)
    if repeat < 1:
        raise UsageError("--repeat must be a positive integer")
    parts = [p for p in parts if p.workloads]
    if duration_ms < 1:
        raise UsageError("--duration-ms must be a positive integer")
    if args.iterations is not None and args.iterations < 1:
        raise UsageError("--iterations must be a positive integer")
    return Settings(
        parts=parts, repeat=repeat, duration_ms=duration_ms, iterations=args.iterations,
        timeout_s=positive(args.timeout, "--timeout"),
        max_rss_bytes=parse_size(args.max_rss) if args.max_rss else int(ram_bytes() * 0.8),
        sample_interval_s=positive(args.sample_interval_ms, "--sample-interval-ms") / 1000,
        build=not args.no_build)


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def cmd_run(args: argparse.Namespace) -> int:
    impls = resolve_impls(args.impl)
    settings = settings_from(args)
    runs = plan(impls, settings)
    if not runs:
        raise UsageError("nothing to run: no selected implementation supports those workloads")
    out = Path(args.out)
    history = load_history(out) if out.is_dir() else {}
    if args.dry_run:
        known = sum(1 for p in runs if history_key(p) in history)
        print(f"{len(runs)} runs, estimated {fmt_duration(sum(estimate_s(p, history) for p in runs))}"
              f" (plus builds; {known} of them from earlier runs in {out})")
        for p in runs:
            print("  " + p.label)
        return 0
    try:
        ensure_launcher()
    except LauncherError as exc:
        raise UsageError(str(exc)) from None

    if args.resume:
        latest = out / "latest"
        if not (latest / "runs.csv").is_file():
            raise UsageError(f"--resume: no previous run in {out}")
        run_dir = latest.resolve()
    else:
        run_dir = out / new_run_id()
        suffix = 1
        while run_dir.exists():
            suffix += 1
            run_dir = out / f"{new_run_id()}-{suffix}"
    run_id = run_dir.name
    store = RunStore(run_dir)
    try:
        store.create()
    except OSError as exc:
        raise UsageError(f"--out: cannot write {run_dir}: {exc.strerror}") from None
    if args.resume:
        done = store.keep_only_ok()
        print(f"resuming {run_id}: {sum(1 for p in runs if p.key in done)} runs already ok")
        runs = [p for p in runs if p.key not in done]
    estimates = [estimate_s(p, history) for p in runs]
    print(f"{len(runs)} runs of {len({p.impl.id for p in runs})} implementations, "
          f"estimated {fmt_duration(sum(estimates))} (plus builds)")
    point_latest(out, run_dir)

    env = store.read_env() if args.resume else {}
    env.update({
        "run_id": run_id, "started_at": env.get("started_at", utc_now()), "finished_at": None,
        "host": host(),
        "toolchains": {i.language.name: (i.language.toolchain.version if i.language.toolchain.present else None)
                       for i in impls},
        "git": git(),
        "settings": {"impls": [i.id for i in impls], "suite": args.suite,
                     "workloads": sorted({w for p in settings.parts for w in p.workloads}),
                     "n": sorted({n for p in settings.parts for n in p.ns}),
                     "buffers": sorted({b for p in settings.parts for b in p.buffers}),
                     "parts": [vars(p) for p in settings.parts], "repeat": settings.repeat,
                     "duration_ms": settings.duration_ms, "iterations": settings.iterations,
                     "timeout_s": settings.timeout_s, "max_rss_bytes": settings.max_rss_bytes,
                     "sample_interval_s": settings.sample_interval_s,
                     "command": sys.argv, "resumed": bool(args.resume)},
        "program_env": redact(program_env()),
    })
    store.write_env(env)
    print(f"recording to {relative(run_dir)}")

    progress = Progress(len(runs), estimates)
    previous = {s: signal.signal(s, _raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        counts = execute(run_id, runs, settings, store, progress)
    except Interrupted as exc:
        kept = len(store.read_runs())
        print(f"\ninterrupted: {kept} completed rows kept in {relative(store.runs_path)}; "
              f"continue with --resume", file=sys.stderr)
        return 128 + exc.signum
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        progress.close()
    # Runtime versions come from the built programs, so only after the build.
    env["runtimes"] = {i.id: i.runtime for i in impls if i.language.toolchain.present}
    env["finished_at"] = utc_now()
    store.write_env(env)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing new"
    print(f"done: {summary}; rows in {relative(store.runs_path)}")
    if not args.no_report:
        write_report(run_dir)
    return 0 if set(counts) <= {"ok", "skipped"} else 1


def write_report(run_dir: Path) -> None:
    """report.md and plots, drawn in a separate process: the measuring
    process never imports matplotlib."""
    proc = subprocess.run([sys.executable, "-m", "harness", "report", str(run_dir)], cwd=ROOT)
    if proc.returncode != 0:
        print("harness: the report could not be written (the rows are kept)", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> int:
    impls = resolve_impls(args.impl)
    names = list(WORKLOADS)
    width = max(len("implementation"), *(len(i.id) for i in impls)) + 2
    print("workloads:")
    for w in WORKLOADS.values():
        print(f"  {w.name:<12} {w.summary}")
    print()
    print(f"{'implementation':<{width}}{'language':<10}" + "".join(f"{w:<13}" for w in names) + "toolchain")
    for i in impls:
        tool = i.language.toolchain
        status = i.runtime if tool.present else f"MISSING: {tool.version}"
        cells = "".join(f"{('yes' if w in i.workloads else '-'):<13}" for w in names)
        print(f"{i.id:<{width}}{i.language.name:<10}{cells}{status}")
    return 0


def _languages(impls: list[Impl]) -> list:
    langs = []
    for i in impls:
        if i.language not in langs:
            langs.append(i.language)
    return langs


def cmd_build(args: argparse.Namespace) -> int:
    failed = 0
    for lang in _languages(resolve_impls(args.impl)):
        if not lang.toolchain.present:
            print(f"{lang.name}: skipped, toolchain missing: {lang.toolchain.version}")
            continue
        result = build_language(lang, None)
        print(f"{lang.name}: {'built' if result.ok else result.error}")
        failed += not result.ok
    return 1 if failed else 0


def cmd_test(args: argparse.Namespace) -> int:
    passed = failed = skipped = 0
    for lang in _languages(resolve_impls(args.impl)):
        if not lang.toolchain.present:
            print(f"{lang.name}: SKIPPED, toolchain missing: {lang.toolchain.version}", flush=True)
            skipped += 1
            continue
        print(f"{lang.name}: building ...", flush=True)
        result = build_language(lang, None)
        if not result.ok:
            print(f"{lang.name}: FAILED, {result.error}", flush=True)
            failed += 1
            continue
        print(f"{lang.name}: $ {' '.join(lang.expand(lang.test))}", flush=True)
        proc = subprocess.run(lang.expand(lang.test), cwd=lang.dir, stdin=subprocess.DEVNULL)
        ok = proc.returncode == 0
        print(f"{lang.name}: {'PASSED' if ok else f'FAILED (exit {proc.returncode})'}", flush=True)
        passed += ok
        failed += not ok
    print(f"languages: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


def _run_dir(text: str) -> Path:
    path = Path(text)
    if not (path / "runs.csv").is_file():
        raise UsageError(f"{text}: not a run directory (no runs.csv)")
    return path.resolve()


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report as write
    path = write(_run_dir(args.run_dir))
    print(f"report: {relative(path)}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .plots import draw_all
    for path in draw_all(_run_dir(args.run_dir)):
        print(relative(path))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare
    print(compare(_run_dir(args.old), _run_dir(args.new)))
    return 0


COMMANDS = {"run": cmd_run, "list": cmd_list, "build": cmd_build, "test": cmd_test,
            "report": cmd_report, "plot": cmd_plot, "compare": cmd_compare}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (UsageError, RegistryError) as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nharness: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
