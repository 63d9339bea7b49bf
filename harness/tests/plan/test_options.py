"""Options: built once from the command line, what a cluster's task gets
back (options.json's keys, in the parser's order), bad names refused."""

from __future__ import annotations

import dataclasses

import pytest

from harness import UsageError
from harness.cli import BISECT_OWN, build_parser
from harness.cluster.layout import SUBMIT_ONLY, options_json
from harness.plan.options import Options


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
