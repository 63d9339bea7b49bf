"""README.md's hand-typed figures, and some of the docs', each checked
against its owner: the set-up table's sizes against what each set-up
announces before it fetches (the scripts' and the load generator's own
lines), the versions it names against the files that pin them, a
release's slowdown against its committed rows, and hand measurements that
nothing regenerates against their own arithmetic and a date and commit.
The figures generated into README (its headline block, the
`<!-- figure -->` markers) are test_docs.py's; its size limit is too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[3]
TABLE_HEAD = "| for | what | where | about |"


def setup_table(readme: str) -> dict[str, list[str]]:
    """The set-up table's rows: the `for` cell to the row's cells."""
    lines = readme[readme.index(TABLE_HEAD):].split("\n\n")[0].splitlines()[2:]
    rows = [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines]
    return {row[0]: row for row in rows}


def _mb(pattern: str) -> Callable[[str], str]:
    """The about cell from one announced size (the pattern's group, in MB)."""
    return lambda text: f"{_found(pattern, text)} MB"


def _found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match, f"the announcement no longer says {pattern!r}"
    return match[1]


def _dotnet(text: str) -> str:
    # the runtime and the reference assemblies, each announced with its size
    sizes = re.findall(r"about (\d+) MB unpacked", text)
    return f"{sum(map(int, sizes))} MB"


def _loadgen(text: str) -> str:
    download = _found(r"\((\d+) MB of module", text)
    unpacked = _found(r"(\d+) MB in Go's module cache", text)
    cpu = _found(r"(\d+) s of CPU", text)
    return f"{download} MB ({unpacked} MB unpacked), {cpu} s of CPU"


# A row's owner: the file whose announcement gives its size, and how the
# about cell follows from that file's text.
ANNOUNCED: dict[str, tuple[str, Callable[[str], str]]] = {
    "csharp, without a .NET SDK": ("csharp/toolchain.sh", _dotnet),
    "csharp, without mcs": ("csharp/toolchain.sh", _mb(r"about (\d+) MB with Mono")),
    "kotlin": ("kotlin/build.sh", _mb(r"into ~/.m2 \(about (\d+) MB, once\)")),
    "erlang": ("erlang/toolchain.sh", _mb(r"about (\d+) MB installed")),
    "elixir": ("elixir/toolchain.sh", _mb(r"about (\d+) MB installed")),
    "python-pypy": ("python/pypy.sh", _mb(r"(\d+) MB installed with pypy3-lib")),
    "the http workload": ("harness/execute/loadgen.py", _loadgen),
}
# Rows whose set-up announces no size: measured by hand when the table was
# written (README's commit 7ab617a, 2026-11-23, and the harness's row since),
# with nothing that regenerates them yet. A new row goes in one of the two.
UNANNOUNCED = {"the harness", "rust", "node", "python", "java", "cpp"}


def test_every_setup_size_is_the_one_its_setup_announces() -> None:
    rows = setup_table((ROOT / "README.md").read_text())
    assert set(rows) == set(ANNOUNCED) | UNANNOUNCED, set(rows) ^ (set(ANNOUNCED) | UNANNOUNCED)
    for name, (path, about) in ANNOUNCED.items():
        assert rows[name][-1] == about((ROOT / path).read_text()), (name, path)


def test_a_size_typed_over_is_found() -> None:
    readme = (ROOT / "README.md").read_text()
    planted = readme.replace("| `/usr` | 17 MB |", "| `/usr` | 18 MB |")
    assert planted != readme
    path, about = ANNOUNCED["erlang"]
    assert setup_table(planted)["erlang"][-1] != about((ROOT / path).read_text())


def test_the_versions_it_names_are_the_pinned_ones() -> None:
    readme = (ROOT / "README.md").read_text()
    toolchain = (ROOT / "csharp" / "toolchain.sh").read_text()
    dotnet = _found(r"(?m)^\s*RUNTIME_VERSION=(\d+)\.", toolchain)
    assert f"Microsoft's .NET {dotnet} runtime" in setup_table(readme)[
        "csharp, without a .NET SDK"][1]
    jdk = _found(r"(?m)^min=(\d+)$", (ROOT / "java" / "jdk.sh").read_text())
    assert f"a JDK ≥ {jdk} is found" in setup_table(readme)["java"][1]
    python = _found(r'requires-python = ">=([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert f"Python {python} or newer" in readme


def test_the_launchers_figures_are_its_tests_bounds() -> None:
    """methodology.md's peak-RSS claims for the launcher are the bounds
    test_measurement.py checks on every run, not figures taken once by hand."""
    text = re.sub(r"\s+", " ", (ROOT / "docs" / "methodology.md").read_text())
    tests = (ROOT / "harness" / "tests" / "execute" / "test_measurement.py").read_text()
    assert "`true` reads under 3 MB through it" in text and "< 3 * 2**20" in tests
    assert "64 or 300 MiB reads within 3% of that" in text and "[64, 300]" in tests \
        and "0.03 * mib" in tests
    assert "holds 200 MiB more reads under 20 MiB" in text and "bytearray(200 * 2**20)" in tests \
        and "< 20 * 2**20" in tests


def test_the_releases_tokio_slowdown_is_its_runs() -> None:
    """docs/releases.md's tokio 1.54.1 against 1.5.0 (the slowdown README
    used to quote), recomputed from the grid's committed rows: the ratio
    each way with its interval, as compare gives them."""
    from harness.core.stats import ratio_interval
    from harness.publish import published
    summary = ROOT / "docs" / "results" / "2026-11-25-releases" / "grid" / "summary.csv"
    by = {(g.impl, g.buffer): g.values("warm_iter_s") for g in published.read_summary(summary)}
    text = re.sub(r"\s+", " ", (ROOT / "docs" / "releases.md").read_text())
    said = []
    for b in (1, 100):
        old, new = by[("rust-tokio-glibc@1.5.0", b)], by[("rust-tokio-glibc", b)]
        slower, ratio = ratio_interval(old, new), ratio_interval(new, old)
        said += [f"{slower.estimate:.1f}× [{slower.low:.2f}–{slower.high:.2f}]",
                 f"{ratio.estimate:.2f} [{ratio.low:.2f}–{ratio.high:.2f}]"]
    assert (f"{said[0]} slower at B = 1 and {said[2]} at B = 100 (the ratios {said[1]} "
            f"and {said[3]} of `compare --baseline rust-tokio-glibc`)") in text, said
