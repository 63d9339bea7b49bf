"""Options: built once from the command line, what a cluster's task gets
back (options.json's keys, in the parser's order), bad names refused; the
parser declared by its fields; the other commands' records checked as
they are built."""

from __future__ import annotations

import dataclasses
import re

import pytest

from harness import UsageError
from harness.cli import BISECT_OWN, build_parser
from harness.cluster.layout import SUBMIT_ONLY, options_json
from harness.plan.options import CompareOptions, ListOptions, MergeOptions, Options, dimensions


def test_options_json_is_the_parsers_options_in_its_order() -> None:
    args = build_parser().parse_args(["run", "--impl", "go", "--users", "5,10", "--counters",
                                      "--registry", "a.toml", "--dry-run"])
    opts = Options.from_namespace(args)
    assert opts.impl == "go" and opts.params == {"users": "5,10"} and opts.counters
    assert opts.registry == ("a.toml",)
    parsed = {k: v for k, v in vars(args).items()
              if k not in ("command", "resume", "no_report", "dry_run", *SUBMIT_ONLY)}
    assert options_json(opts) == parsed and list(options_json(opts)) == list(parsed)
    assert Options.from_record(options_json(opts)) == dataclasses.replace(opts, out=None)


def test_bisect_keeps_its_own_options() -> None:
    args = build_parser().parse_args(["bisect", "go", "--good", "1.21.0", "--bad", "1.22.0",
                                      "--max-repeat", "12", "--workload", "chain"])
    opts = Options.from_namespace(args, own=BISECT_OWN)
    assert opts.impl is None and opts.max_repeat is None and opts.workload == "chain"


def test_an_unknown_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown option 'nope'"):
        Options.from_record({"nope": 1})


def test_run_and_bisect_parse_what_options_declares() -> None:
    """The parser is Options' fields: each run option is a field (but run's
    own switches), bisect's measuring ones those marked for it."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    declared = {f.name for f in dataclasses.fields(Options)} - {"params"}
    run = {a.dest for a in sub["run"]._actions} - {"help", "resume", "no_report", "dry_run"}
    assert run == declared | set(dimensions())
    bisect = {a.dest for a in sub["bisect"]._actions}
    assert {f.name for f in dataclasses.fields(Options) if "bisect" in f.metadata["commands"]
            and f.name != "params"} <= bisect and "suite" not in bisect and "gate" not in bisect
    assert "$" not in sub["run"].format_help()  # every default said


@pytest.mark.parametrize("args, message", [
    (["--allow-undecided"], "--allow-undecided is for the gate: give --fail-above PCT too"),
    (["--calibration", "c"], "--calibration names the figures the gate cannot decide"),
    (["--margin", "=5%"], "--margin '=5%': METRIC=PCT with no metric"),
    (["--baseline", "go"], "compare --baseline takes one run directory"),
])
def test_compare_options_refuse_what_means_nothing(args: list[str], message: str) -> None:
    parsed = build_parser().parse_args(["compare", "old", "new", *args])
    with pytest.raises(UsageError, match=re.escape(message)):
        CompareOptions.from_namespace(parsed)
    with pytest.raises(UsageError, match="compare needs OLD and NEW run directories"):
        CompareOptions("old")


def test_compare_options_are_typed() -> None:
    parsed = build_parser().parse_args(["compare", "old", "--baseline", "go", "--fail-above",
                                        "5%", "--margin", "3%"])
    opts = CompareOptions.from_namespace(parsed)
    assert opts.fail_above == pytest.approx(0.05) and opts.new is None
    assert all(v == pytest.approx(0.03) for v in opts.margin.values())


def test_merge_and_list_options_refuse_what_means_nothing() -> None:
    with pytest.raises(UsageError, match="--out is empty: name the results folder"):
        MergeOptions.from_namespace(build_parser().parse_args(["merge", "a", "--out", " "]))
    with pytest.raises(UsageError, match="--labels is empty"):
        MergeOptions.from_namespace(build_parser().parse_args(["merge", "a", "--labels", ","]))
    with pytest.raises(UsageError, match="list: name the implementations once"):
        ListOptions.from_namespace(build_parser().parse_args(["list", "go", "--impl", "rust"]))
    assert ListOptions.from_namespace(build_parser().parse_args(["list"])).impls() == ["all"]


def test_a_gate_on_slurm_is_refused_by_options() -> None:
    with pytest.raises(UsageError, match="--gate runs on this machine: not with --on slurm"):
        Options(gate="5%", on="slurm").refuse_unused()
