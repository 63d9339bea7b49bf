"""`harness publish`: a run's page in docs/results (readme_tables.publish),
or, with --index, every page of OUT and its index again; in docs/results,
README.md's block and the docs' figures too."""

from __future__ import annotations

from pathlib import Path

from .. import UsageError
from ..record.safe_output import whole
from .page import render_page
from .readme_tables import load_page, pages, publish, regenerate_docs, render_index

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "docs" / "results"


def publish_command(run_dir: Path | None, out: Path, name: str | None, index: bool) -> int:
    """`harness publish`: RUN_DIR's page in OUT, or with index every page
    of OUT and its index again (and, in docs/results, README's block and the
    docs' figures)."""
    root = ROOT if out.resolve() == DEFAULT_OUT else None
    if index:
        out.mkdir(parents=True, exist_ok=True)
        for page_name in pages(out):
            whole(out / f"{page_name}.md", render_page(load_page(out, page_name), page_name))
        whole(out / "README.md", render_index(out))
        if root is not None:
            regenerate_docs(out, root)
        return 0
    if run_dir is None:
        raise UsageError("give a run directory, or --index")
    print(publish(run_dir, out, name, root))
    return 0
