"""Command line: python -m harness {run,list,build,test,report,plot,compare,merge,bisect,export,
publish,claims}.
Parses and dispatches: run's and bisect's options are declared by the fields of
plan/options.py's Options, the other commands' checked by their records there;
settings.py turns Options into Settings, session.py runs them."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from string import Template
from typing import Any, Callable, NoReturn, Sequence

from . import ROOT, HarnessError, UsageError, __version__, relative
from .execute.builder import prepare
from .execute.langtests import ci, run_language_tests
from .execute.loadgen import retired_switch
from .processes.children import stoppable
from .core.formatting import fmt_number
from .core.envinfo import ram_bytes
from .core.registry import Impl, RegistryError, languages, resolve
from .core.schema import Status
from .present.listing import listing_lines, versions_lines
from .record.rundir import RunDirError, check_out, open_run_dir, point_latest
from .session import run_suite
from .plan.options import CompareOptions, ListOptions, MergeOptions, Options, dimensions, impl_list
from .plan.settings import (DEFAULT_MAX_REPEAT, DEFAULTS, GATE_BUDGET_S, GATE_MAX_REPEAT,
                            settings_from)
from .cluster.slurm import cluster_options, run_on_slurm

EPILOG = """examples:
  python -m harness list
  python -m harness run --impl go --workload sleep,chain,bounded --n 1000,100000 --buffer 1,100
  python -m harness run --impl rust --n 1000000 --workload sleep --repeat 1
  python -m harness run --impl csharp --workload http --users 50 --requests 20
  python -m harness report results/latest
  python -m harness compare results/OLD results/NEW
  python -m harness export results/latest --format bencher --out bmf.json
"""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input in one line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"harness: error: {message} (see --help)\n")


def _listed(values: list[int]) -> str:
    """A default list as its option takes it: '1000', '1,100'."""
    return ",".join(map(str, values))


def said_defaults() -> dict[str, str]:
    """settings.py's defaults as run's help says them: the $names in the
    help of Options' fields (plan/options.py's option())."""
    return dict(n=_listed(DEFAULTS["n"]), buffers=_listed(DEFAULTS["buffers"]),
                repeat=str(DEFAULTS["repeat"]), duration_ms=str(DEFAULTS["duration_ms"]),
                timeout_s=fmt_number(DEFAULTS["timeout_s"]),
                max_rss=fmt_number(DEFAULTS["max_rss_of_ram"] * 100),
                sample_interval_ms=fmt_number(DEFAULTS["sample_interval_ms"]),
                max_repeat=str(DEFAULT_MAX_REPEAT), gate_max_repeat=str(GATE_MAX_REPEAT),
                gate_budget=fmt_number(GATE_BUDGET_S / 60))


def add_option(p: argparse.ArgumentParser, f: dataclasses.Field[Any]) -> None:
    """An Options field, declared as its metadata says (option())."""
    meta = f.metadata
    declared = {k: meta[k] for k in ("type", "metavar", "action") if meta[k] is not None}
    p.add_argument("--" + f.name.replace("_", "-"), default=meta["default"],
                   help=Template(meta["help"]).substitute(said_defaults()), **declared)


def add_options(p: argparse.ArgumentParser, command: str) -> None:
    """The Options fields that `command` takes, in the record's order
    (options.json keeps it); at params, the workloads' dimensions."""
    for f in dataclasses.fields(Options):
        if command not in f.metadata["commands"]:
            continue
        if f.name != "params":
            add_option(p, f)
            continue
        for d in dimensions().values():
            p.add_argument(d.option, dest=d.name, default=None, help=d.help,
                           metavar=d.option.lstrip("-").upper().replace("-", "_"))


def add_registry(p: argparse.ArgumentParser) -> None:
    """--registry as run declares it, for the commands that take no other option of run's."""
    add_option(p, next(f for f in dataclasses.fields(Options) if f.name == "registry"))


def build_parser() -> Parser:
    """Every command's options, each command's declared by its own function."""
    parser = Parser(prog="python -m harness", description=(
        "Benchmark harness for concurrency runtimes: runs each implementation's built "
        "program, measures wall time, CPU and peak RSS, validates its answer and records "
        "every run (see docs/protocol.md)."), epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_run_parser(sub)
    add_bisect_parser(sub)
    add_setup_parsers(sub)
    add_report_parsers(sub)
    add_compare_parser(sub)
    add_export_parser(sub)
    add_publish_parsers(sub)
    return parser


def add_run_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    run = sub.add_parser("run", help="build, run and record a suite of benchmarks")
    add_options(run, "run")
    run.add_argument("--resume", action="store_true",
                     help="continue the newest run in OUT: rows already ok are kept, failed "
                          "ones of the plan run again (the earlier attempt goes to retried.csv)")
    run.add_argument("--no-report", action="store_true", help="do not write report.md and plots")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan and its estimated duration, run nothing")


def add_bisect_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    bis = sub.add_parser("bisect", help="the first release between two where a figure changed "
                                        "(each step's verdict a 95%% interval)")
    bis.add_argument("impl", metavar="IMPL", help="an implementation with [impl.versions]")
    bis.add_argument("--good", required=True, metavar="V1", help="a release with the old figure")
    bis.add_argument("--bad", required=True, metavar="V2", help="a release with the new figure")
    bis.add_argument("--figure", default=None,
                     help="the runs.csv figure to follow (default: the workload's first headline, "
                          "e.g. warm_iter_s)")
    bis.add_argument("--max-repeat", type=int, default=DEFAULT_MAX_REPEAT, metavar="M",
                     help="the most runs of one release before a step is called not settled "
                          f"(default {DEFAULT_MAX_REPEAT})")
    bis.add_argument("--resume", default=None, metavar="RUN_DIR",
                     help="continue an interrupted bisect in its run directory (the one its first "
                          "line names), with the same arguments: its rows are kept")
    add_options(bis, "bisect")


def add_setup_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """list, build and test."""
    lst = sub.add_parser("list", help="implementations, workloads and toolchains")
    lst.add_argument("names", nargs="?", default=None, metavar="IMPL",
                     help="the implementations, as --impl names them (e.g. list --versions go)")
    lst.add_argument("--impl", default=None, help="the same as IMPL (default: all)")
    lst.add_argument("--versions", action="store_true",
                     help="the releases that IMPL@VERSION can name for IMPL's implementations "
                          "(from the registry, cached for a day), newest first; for IMPL@VERSION, "
                          "whether the registry lists that release")
    add_registry(lst)
    bld = sub.add_parser("build", help="set up and build implementations")
    tst = sub.add_parser("test", help="run each language's own unit tests (after building); exit 3 "
                         "when none was tested, 1 when one failed (under CI=true, or was skipped)")
    for p in (bld, tst):
        p.add_argument("--impl", default="all")
        add_registry(p)


def add_report_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """report and plot, which read one run, and merge, which joins several."""
    for name, text in (("report", "write report.md, summary.csv, results.json and plots"),
                       ("plot", "redraw the plots of a run")):
        p = sub.add_parser(name, help=text)
        p.add_argument("run_dir", nargs="?", default=str(ROOT / "results" / "latest"))
        if name == "report":
            p.add_argument("--format", default="files", choices=["files", "github"],
                           help="files (default): write report.md, report.html, summary.csv, "
                                "results.json and plots; github: print a job summary (the "
                                "verdicts and failures, within 1 MiB) for $GITHUB_STEP_SUMMARY, "
                                "writing nothing")

    mrg = sub.add_parser("merge", help="combine run directories from several machines into one "
                                        "(each row keyed by its machine), with its report")
    mrg.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    mrg.add_argument("--labels", default=None,
                     help="comma-separated machine names, one per RUN_DIR in order (default: each "
                          "env.json's CPU model and cores, e.g. 'AMD EPYC x2')")
    mrg.add_argument("--out", default=str(ROOT / "results"),
                     help="results folder for the merged run directory (default: results/)")
    mrg.add_argument("--no-report", action="store_true", help="do not write report.md and plots")


def add_compare_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    cmp_ = sub.add_parser("compare", help="NEW against OLD: each figure's change, its 95%% "
                                          "interval and a verdict, per configuration")
    cmp_.add_argument("old", help="the old run directory (with --baseline: the one run)")
    cmp_.add_argument("new", nargs="?", help="the new run directory (not with --baseline)")
    cmp_.add_argument("--baseline", default=None, metavar="IMPL",
                      help="within one run: every other implementation, variant or release "
                           "against IMPL's figures (e.g. compare RUN --baseline go)")
    cmp_.add_argument("--fail-above", default=None, metavar="PCT",
                      help="a CI gate: exit 1 when a workload's headline figure (iteration "
                           "times, peak RSS; http: throughput, median response) is worse by more "
                           "than PCT (e.g. 5%%) by an exact one-sided test at 95%% (3 ok runs a "
                           "side suffice), when a "
                           "configuration with ok runs in OLD has none in NEW, or when the runs "
                           "have nothing in common; exit 3 when a headline figure can be shown "
                           "neither worse nor within PCT (undecided)")
    cmp_.add_argument("--calibration", default=None, metavar="RUN_DIR",
                      help="with --fail-above: a run of the calibrate suite on this machine; the "
                           "figures its A/A noise cannot decide at PCT are named, not gated")
    cmp_.add_argument("--allow-undecided", action="store_true",
                      help="with --fail-above: exit 0, not 3, when figures are undecided and "
                           "nothing failed")
    cmp_.add_argument("--margin", default=None, metavar="PCT|METRIC=PCT,...",
                      help="call two figures level when their ratio's whole interval lies within "
                           "±PCT (default per metric: 5%% for times, 2%% for peak RSS)")
    cmp_.add_argument("--format", default="text", choices=["text", "markdown", "github", "json"],
                      help="text (default), markdown (for a pull request), github (a job "
                           "summary: the verdict first, the table folded, within GitHub's 1 MiB) "
                           "or json")


def add_export_parser(sub: argparse._SubParsersAction[Parser]) -> None:
    exp = sub.add_parser("export", help="a run's figures as JSON for Bencher or "
                                        "github-action-benchmark, to keep history and alerts")
    exp.add_argument("run_dir", nargs="?", default=str(ROOT / "results" / "latest"),
                     metavar="RUN_DIR", help="the run to export (default: results/latest)")
    exp.add_argument("--format", required=True, choices=["bencher", "github-action-benchmark"],
                     help="bencher: Bencher Metric Format (every figure, its interval as the "
                          "bounds); github-action-benchmark: the action's custom JSON")
    exp.add_argument("--direction", default=None, choices=["smaller", "bigger"],
                     help="github-action-benchmark only, and needed there: the figures where "
                          "smaller is better (tool customSmallerIsBetter) or bigger "
                          "(customBiggerIsBetter: throughput)")
    exp.add_argument("--out", default=None, metavar="FILE",
                     help="write FILE, whole or not at all (default: standard output)")
    exp.add_argument("--figures", default="headline", choices=["headline", "all"],
                     help="headline (default): the figures the report's verdicts are about, per "
                          "workload (times and peak RSS; sleep: peak RSS; http: throughput, "
                          "median response, peak RSS); all: every figure")
    exp.add_argument("--partial", action="store_true",
                     help="export a run that did not finish (no finished_at), marked as partial "
                          "in the document; refused without it")




def _impls(args: argparse.Namespace) -> list[Impl]:
    return resolve(impl_list(args.impl), args.registry)


def add_publish_parsers(sub: argparse._SubParsersAction[Parser]) -> None:
    """publish, which writes a run's page of docs/results, and claims, which
    prints the articles' claims judged on a run."""
    pub = sub.add_parser("publish", help="a run's page in docs/results, its files beside it "
                                         "(or, with --index, every page and the index again)")
    pub.add_argument("run_dir", nargs="?", type=Path, help="a run directory with summary.csv")
    pub.add_argument("--out", type=Path, default=ROOT / "docs" / "results",
                     help="default: docs/results")
    pub.add_argument("--name", help="the page's name (default: <date>-<machine>)")
    pub.add_argument("--index", action="store_true",
                     help="publish no run: regenerate every page of OUT from the files beside "
                          "it, and the index (in docs/results, README.md's block and the docs' "
                          "figures too)")
    clm = sub.add_parser("claims", help="the articles' claims judged on a run directory or a "
                                        "published run's folder, as a Markdown table")
    clm.add_argument("run_dir", type=Path)


def cmd_run(args: argparse.Namespace) -> int:
    opts = Options.from_namespace(args)
    opts.refuse_unused()
    settings = settings_from(opts, ram_bytes())
    settings.refuse_unused()
    check_out(Path(args.out))  # --dry-run refuses the OUT the run would
    if (cluster := cluster_options(opts)) is not None:
        return run_on_slurm(settings, cluster, opts, Path(args.out), resume=args.resume,
                            dry_run=args.dry_run, report=not args.no_report)
    return run_suite(settings, Path(args.out), resume=args.resume, dry_run=args.dry_run,
                     report=not args.no_report)


# bisect's own options named as run's are (its IMPL, its ceiling); the
# others are run's measuring options, for each step
BISECT_OWN = ("impl", "max_repeat")


def cmd_bisect(args: argparse.Namespace) -> int:
    from .bisect import run_bisect
    opts = Options.from_namespace(args, own=BISECT_OWN)
    return run_bisect(args.impl, args.good, args.bad, opts, Path(args.out), ram_bytes(),
                      args.figure, args.max_repeat,
                      Path(args.resume) if args.resume is not None else None)


def cmd_list(args: argparse.Namespace) -> int:
    opts = ListOptions.from_namespace(args)
    impls = resolve(opts.impls(), list(opts.registry))
    for line in versions_lines(impls) if opts.versions else listing_lines(impls):
        print(line)
    return 0


@stoppable
def cmd_build(args: argparse.Namespace) -> int:
    failed = 0
    for lang in languages(_impls(args)):
        ready = prepare(lang, None)
        print(f"{lang.name}: {'built' if ready.ready else f'{ready.status}, {ready.reason}'}")
        failed += ready.status == Status.BUILD_FAILED
    return 1 if failed else 0


@stoppable
def cmd_test(args: argparse.Namespace) -> int:
    return run_language_tests(languages(_impls(args)), strict=ci())


def cmd_report(args: argparse.Namespace) -> int:
    if args.format == "github":
        from .analyse.analysis import analyse
        from .present.export.github_summary import job_summary
        print(job_summary(analyse(open_run_dir(args.run_dir))), end="")
        return 0
    from .present.outputs import write_report  # matplotlib stays out of every other code path
    report = write_report(open_run_dir(args.run_dir).path)
    print(f"report: {relative(report)}")
    print(f"report: {relative(report.with_suffix('.html'))}")  # last: ./run.sh ends on it
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .present.plots import draw_all
    for path in draw_all(open_run_dir(args.run_dir)):
        print(relative(path))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .present.compare import compare_baseline, compare_dirs, output
    opts = CompareOptions.from_namespace(args)
    calibration = open_run_dir(opts.calibration).path if opts.calibration is not None else None
    if opts.baseline is not None:
        verdict = compare_baseline(open_run_dir(opts.old).path, opts.baseline, opts.fail_above,
                                   opts.margin, opts.allow_undecided, calibration)
    else:
        assert opts.new is not None  # CompareOptions: two run directories without --baseline
        verdict = compare_dirs(open_run_dir(opts.old).path, open_run_dir(opts.new).path,
                               opts.fail_above, opts.margin, opts.allow_undecided, calibration)
    print(output(verdict, opts.format))
    return verdict.exit_status


def cmd_export(args: argparse.Namespace) -> int:
    from .present.export import export, exporter
    from .record.safe_output import target
    chosen = exporter(args.format, args.direction)
    run = open_run_dir(args.run_dir)
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        target(out, run.path)  # checked before the run is read: a refusal costs nothing
    export(run, chosen, out, every=args.figures == "all", partial=args.partial)
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from .publish.command import publish_command  # matplotlib stays out of other paths
    return publish_command(args.run_dir, args.out, args.name, args.index)


def cmd_claims(args: argparse.Namespace) -> int:
    from .publish.claims import print_table
    return print_table(args.run_dir)


def cmd_merge(args: argparse.Namespace) -> int:
    from .record.merge import merge
    opts = MergeOptions.from_namespace(args)
    out = Path(opts.out)
    check_out(out)  # a file, or latest not ours: refused before anything is read
    report = None
    if opts.report:
        from .present.outputs import write_report as report
    merged = merge(opts.run_dirs, out, opts.labels, report)  # written aside, with its report
    point_latest(out, merged)
    print(f"merged {len(opts.run_dirs)} run directories: {relative(merged.runs_path)}")
    if report is not None:
        print(f"report: {relative(merged.path / 'report.md')}")
        print(f"report: {relative(merged.path / 'report.html')}")
    return 0


COMMANDS = {"run": cmd_run, "list": cmd_list, "build": cmd_build, "test": cmd_test,
            "report": cmd_report, "plot": cmd_plot, "compare": cmd_compare, "merge": cmd_merge,
            "bisect": cmd_bisect, "export": cmd_export, "publish": cmd_publish,
            "claims": cmd_claims}


def one_line(message: object) -> str:
    """An error's text as one line (a file's name or a parser's message may hold newlines)."""
    return " ".join(str(message).split("\n"))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (retired := retired_switch()) is not None:
        print(f"harness: error: {retired}", file=sys.stderr)
        return 2
    return guarded(lambda: COMMANDS[args.command](args))


def guarded(command: Callable[[], int]) -> int:
    """A command's exit status, its errors each one line on stderr (bad
    input and a file that cannot be read or written: 2)."""
    try:
        return command()
    except (UsageError, RegistryError, RunDirError) as exc:
        print(f"harness: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:  # e.g. the system python3 without matplotlib
        print(f"harness: error: {exc.name} is not installed for {sys.executable}: run `make "
              f"setup` and use .venv/bin/python -m harness (or pip install .)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nharness: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # a file that cannot be read or written, not caught nearer
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"harness: error: {where}{one_line(exc.strerror or exc)}", file=sys.stderr)
        return 2
