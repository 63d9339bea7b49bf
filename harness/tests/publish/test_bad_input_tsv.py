"""docs/protocol-bad-input.tsv is written from docs/protocol-bad-input.json
(benchmarks/bad_input_tsv.py) for the tests of java, kotlin, erlang, elixir
and cpp: the committed file must be what the generator writes now."""

from __future__ import annotations

import json

import pytest

from benchmarks import bad_input_tsv


def test_committed_tsv_is_what_the_generator_writes() -> None:
    assert bad_input_tsv.TSV.read_text() == bad_input_tsv.generated(), (
        "docs/protocol-bad-input.tsv is stale: run python3 benchmarks/bad_input_tsv.py")


def test_the_tsv_reads_back_as_the_json() -> None:
    """Parsed the way the languages' tests parse it, the TSV is the JSON's table."""
    table = json.loads(bad_input_tsv.JSON.read_text())
    required, cases = {}, []
    for line in bad_input_tsv.TSV.read_text().splitlines():
        if line.startswith("#"):
            continue
        kind, *fields = line.split("\t")
        if kind == "required":
            required[fields[0]] = fields[1:]
        else:
            assert kind == "case", line
            cases.append({"name": fields[0], "when": fields[1], "args": fields[2:]})
    assert required == table["required"]
    assert cases == [{"name": c["name"], "when": c.get("when", "always"), "args": c["args"]}
                     for c in table["cases"]]


@pytest.mark.parametrize("bad", ["", "a\tb", "a\nb"])
def test_a_value_the_tsv_cannot_hold_is_an_error(bad) -> None:
    with pytest.raises(ValueError):
        bad_input_tsv.render({"required": {}, "cases": [{"name": "x", "args": [bad]}]})
