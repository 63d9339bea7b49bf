"""docs/protocol-bad-input.tsv, the bad-input table in a line-per-case form,
written from docs/protocol-bad-input.json (its one source) for the languages
whose standard library has no JSON reader here (java, kotlin, erlang, elixir,
cpp):

    python3 benchmarks/bad_input_tsv.py          # rewrite the TSV
    python3 benchmarks/bad_input_tsv.py --check  # exit 1 if it is stale

Each line is tab-separated. `required<TAB>WORKLOAD<TAB>ARG...` gives the
options a workload requires (what "{required}" stands for); `case<TAB>NAME
<TAB>WHEN<TAB>ARG...` one case, WHEN being "always" where the JSON has none.
Lines starting with "#" are comments. No field is empty and none holds a tab
or a newline (this refuses such a table).

harness/tests/publish/test_bad_input_tsv.py fails when the committed TSV differs from
what this writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON = ROOT / "docs" / "protocol-bad-input.json"
TSV = ROOT / "docs" / "protocol-bad-input.tsv"

HEADER = """\
# Generated from docs/protocol-bad-input.json by `python3 benchmarks/bad_input_tsv.py`: do not edit.
# The bad-input table (docs/protocol.md) for the tests of languages without a JSON reader.
# Tab-separated. required<TAB>WORKLOAD<TAB>ARG...: what "{required}" stands for with WORKLOAD.
# case<TAB>NAME<TAB>WHEN<TAB>ARG...: WHEN is always, declared, undeclared or a workload's name;
# in ARG, "{w}" is a workload's name and "{required}" its required options, spliced in.
"""


def field(text: str) -> str:
    if not text or "\t" in text or "\n" in text or "\r" in text:
        raise ValueError(f"cannot write {text!r} as a TSV field")
    return text


def line(*fields: str) -> str:
    return "\t".join(field(f) for f in fields) + "\n"


def render(table: dict) -> str:
    if "always" in table["required"]:
        raise ValueError('"always" stands for a case without "when": it cannot be a workload')
    out = [HEADER]
    for workload, args in table["required"].items():
        out.append(line("required", workload, *args))
    for case in table["cases"]:
        out.append(line("case", case["name"], case.get("when", "always"), *case["args"]))
    return "".join(out)


def generated() -> str:
    return render(json.loads(JSON.read_text()))


def main(argv: list[str]) -> int:
    text = generated()
    if argv == ["--check"]:
        if TSV.read_text() != text:
            print(f"{TSV.relative_to(ROOT)} is stale: run python3 benchmarks/bad_input_tsv.py", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: bad_input_tsv.py [--check]", file=sys.stderr)
        return 2
    TSV.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
