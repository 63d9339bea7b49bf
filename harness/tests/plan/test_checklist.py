"""docs/implementations.md's checklists for a new language and a new
workload, kept true where a test can see it."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

import pytest

from harness import ROOT
from harness.core.registry import load_registry
from harness.core.workloads import WORKLOADS

PROTOCOL = (ROOT / "docs" / "protocol.md").read_text()
BAD_INPUT = json.loads((ROOT / "docs" / "protocol-bad-input.json").read_text())
LANGUAGES = sorted(p.parent for p in ROOT.glob("*/impls.toml"))
IMPLS = [i for i in load_registry() if i.language.dir.parent == ROOT]


def tracked(folder: str) -> list[str]:
    return subprocess.run(["git", "ls-files", "--", folder], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.splitlines()


def table_after(heading: str) -> str:
    """The first column of the markdown table that follows a line."""
    lines = PROTOCOL[PROTOCOL.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])
    return "\n".join(rows)


def test_the_doc_names_every_language_folder() -> None:
    doc = (ROOT / "docs" / "implementations.md").read_text()
    for lang in LANGUAGES:
        assert f"`{lang.name}/`" in doc, lang.name


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda p: p.name)
def test_a_language_folder_has_its_tests_readme_and_ignored_build_outputs(lang) -> None:
    files = tracked(lang.name)
    assert f"{lang.name}/README.md" in files
    assert any("test" in f.removeprefix(f"{lang.name}/") for f in files), "no tests"
    root_ignores = (ROOT / ".gitignore").read_text().splitlines()
    assert (lang / ".gitignore").exists() or any(
        line.startswith(f"{lang.name}/") for line in root_ignores), "no .gitignore line"


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_a_workload_is_in_the_protocol_the_bad_input_table_and_the_default_suite(workload) -> None:
    if WORKLOADS[workload].kind == "program":
        assert f"### `{workload}`" in PROTOCOL
        assert workload in BAD_INPUT["required"]
    else:
        assert f"`{workload}`" in PROTOCOL
        assert any(case.get("when") == workload for case in BAD_INPUT["cases"])
    suites = tomllib.loads((ROOT / "harness" / "plan" / "suites.toml").read_text())
    assert any(workload in part["workloads"] for part in suites["default"]["part"])


@pytest.mark.parametrize("workload, heading", [("skynet", "`skynet` per implementation"),
                                               ("http", "The servers (each language's")])
def test_every_implementation_has_its_row_in_the_protocol_tables(workload, heading) -> None:
    named = set(re.findall(r"[\w-]+", table_after(heading)))
    missing = [i.id for i in IMPLS if workload in i.workloads and i.id not in named]
    assert not missing, f"docs/protocol.md's {workload} table lacks {missing}"
