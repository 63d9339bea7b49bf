"""Merge one-step runs of the generator-ceiling study into one run folder.

Each step of the study is a run of its own (`--rate R`, a one-step ladder,
so that no step ends the next: the study judges the generator alone), the
two generators alternating (k6, vegeta, k6, ...). This copies every step's
row, unchanged but for `rep`, which becomes the step's round (its 1st,
2nd ... run at that rate; a step the generator could not keep is tried
again within its run, and those attempts keep the round), into
OUT/runs.csv, with the first run's env.json: the folder docs/protocol.md's
figure reads.

    python3 docs/studies/generator-ceiling/merge_steps.py OUT RUN_DIR...
"""

import csv
import shutil
import sys
from pathlib import Path


def main(out: Path, runs: list[Path]) -> None:
    out.mkdir(parents=True)
    shutil.copy(runs[0] / "env.json", out / "env.json")
    seen: dict[str, int] = {}
    header: list[str] | None = None
    rows = []
    for run in sorted(runs):
        with (run / "runs.csv").open(newline="") as f:
            reader = csv.DictReader(f)
            header = header or list(reader.fieldnames or [])
            found = list(reader)
        for rate in {row["rate"] for row in found}:
            seen[rate] = seen.get(rate, 0) + 1
        rows += [row | {"rep": str(seen[row["rate"]])} for row in found]
    with (out / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, header or [])
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
