"""The analysis and its written outputs, pinned: summary.csv, results.json and
report.md of committed run directories, byte for byte. A change to the code
that moves a figure or a word fails here; a change meant to do so
regenerates the expected files on purpose:

    .venv/bin/python -m harness.tests.present.test_golden

and the diff shows what it moved. The quick fixture is a real `./run.sh
--quick` (runs.csv and env.json; no samples, no plots)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harness.present.outputs import write_report

FIXTURES = Path(__file__).parents[1] / "fixtures"
EXPECTED = FIXTURES / "expected"
RUNS = {"quick": FIXTURES / "quick", "run": FIXTURES / "run",
        **{f"v{v}": FIXTURES / "formats" / f"v{v}" for v in (1, 7)}}
OUTPUTS = ("summary.csv", "results.json", "report.md")
# The quick run's results.json (1 MB, every row again) is left out: its rows
# are the fixture's own runs.csv, and its figures are summary.csv's.
LEFT_OUT = {("quick", "results.json")}


def _outputs(source: Path, into: Path) -> dict[str, bytes]:
    run = into / "run"
    shutil.copytree(source, run)
    write_report(run, draw=False)
    return {name: (run / name).read_bytes() for name in OUTPUTS}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_outputs_are_as_pinned(name: str, tmp_path: Path) -> None:
    written = _outputs(RUNS[name], tmp_path)
    for output, data in written.items():
        if (name, output) in LEFT_OUT:
            continue
        assert data == (EXPECTED / name / output).read_bytes(), f"{name}/{output} changed"


if __name__ == "__main__":
    import tempfile
    for name, source in RUNS.items():
        with tempfile.TemporaryDirectory() as tmp:
            for output, data in _outputs(source, Path(tmp)).items():
                if (name, output) in LEFT_OUT:
                    continue
                (EXPECTED / name).mkdir(parents=True, exist_ok=True)
                (EXPECTED / name / output).write_bytes(data)
    sys.exit(0)
