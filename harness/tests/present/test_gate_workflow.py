"""docs/usage.md's GitHub Actions example of run --gate (a pull request's
A/B gate) passes actionlint, as the repository's own workflows do
(tests/wiring/test_workflows.py builds actionlint and finds shellcheck),
and gates as the harness does: --gate, then compare's job summary."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness import ROOT
from harness.core import local_builds
from harness.tests.wiring.test_workflows import ACTIONLINT_VERSION, ensure_actionlint, \
    ensure_shellcheck

USAGE = ROOT / "docs" / "usage.md"
BLOCK = re.compile(r"<!-- gate-workflow -->\n```yaml\n(.*?)```\n<!-- /gate-workflow -->", re.S)


def _example(tmp_path: Path) -> Path:
    found = BLOCK.findall(USAGE.read_text())
    assert len(found) == 1, "docs/usage.md: one gate-workflow example between its markers"
    path = tmp_path / "gate.yml"
    path.write_text(found[0])
    return path


def _lint(actionlint: Path, example: Path, shellcheck: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(actionlint), "-no-color", f"-shellcheck={shellcheck}", "-pyflakes=",
                           str(example)], capture_output=True, text=True, timeout=120)


def test_the_gate_example_passes_actionlint(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    example = _example(tmp_path)
    proc = _lint(ensure_actionlint(pytestconfig), example, "")
    assert proc.returncode == 0, f"actionlint {ACTIONLINT_VERSION}:\n{proc.stdout}{proc.stderr}"


def test_the_gate_examples_scripts_pass_shellcheck(tmp_path: Path,
                                                   pytestconfig: pytest.Config) -> None:
    example = _example(tmp_path)
    actionlint = ensure_actionlint(pytestconfig)
    proc = _lint(actionlint, example, ensure_shellcheck(pytestconfig))
    assert proc.returncode == 0, f"actionlint with shellcheck:\n{proc.stdout}{proc.stderr}"


def test_the_example_gates_and_summarises_as_the_harness_does(tmp_path: Path) -> None:
    text = _example(tmp_path).read_text()
    assert re.search(r"harness run --impl \"(\S+)@git:\$BASE,\1@git:\$HEAD\"", text)
    assert "--gate 5%" in text and "|| status=$?" in text
    # the baseline's label: its commit's first local_builds.SHORT hex digits
    short = re.search(r'harness compare results/latest --baseline "\S+@git:\$\{BASE::(\d+)\}" \\\n'
                      r'\s+--fail-above 5% --format github >> "\$GITHUB_STEP_SUMMARY"', text)
    assert short and int(short[1]) == local_builds.SHORT
