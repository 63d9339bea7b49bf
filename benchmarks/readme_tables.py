"""The README's "Figures" tables from a run directory of the default suite,
in markdown on stdout, so that the figures in the README are regenerated,
never typed:

    .venv/bin/python benchmarks/readme_tables.py results/latest

Medians of the ok runs; a cell with no ok run names the statuses it got
(e.g. "3 crashed"). ×floor is the multiple of the floor implementation
(cpp-coroutines) at the same configuration, where the run has it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.analysis import Group, Ranks, analyse  # noqa: E402
from harness.formatting import fmt_bytes, fmt_ratio, fmt_seconds  # noqa: E402
from harness.rundir import open_run_dir  # noqa: E402

MIB = 1 << 20


def mib(value: float | None) -> str:
    return "" if value is None else f"{value / MIB:,.0f} MiB"


def spread(g: Group, metric: str, fmt: Callable[[float | None], str]) -> str:
    """The median, and the min–max range where there is more than one ok run."""
    s = g.metrics.get(metric)
    if s is None:
        return g.statuses if not g.ok else ""
    if g.ok > 1 and fmt(s.max) != fmt(s.min):
        return f"{fmt(s.median)} ({fmt(s.min)}–{fmt(s.max)})"
    return fmt(s.median)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def pick(groups: list[Group], workload: str, n: int, buffer: int | None = None
         ) -> dict[str, Group]:
    return {g.impl: g for g in groups if g.workload == workload and g.n == n
            and g.buffer == buffer and not g.params}


def sleep_table(groups: list[Group], ranks: Ranks) -> str:
    ns = sorted({g.n for g in groups if g.workload == "sleep" and g.n})
    by_n = {n: pick(groups, "sleep", n) for n in ns}
    top = ns[-1]
    impls = sorted({i for m in by_n.values() for i in m})
    rows = []
    for impl in impls:
        row = [impl] + [spread(by_n[n][impl], "peak_rss_bytes", mib) if impl in by_n[n] else ""
                        for n in ns]
        g = by_n[top].get(impl)
        row.append(fmt_seconds(g.median("spawn_s")) if g and g.median("spawn_s") else "")
        per_task = g.mem_per_task_bytes if g else None
        row.append(fmt_bytes(per_task) if per_task else "")
        row.append(fmt_ratio(ranks[g.key].get("floor"), best_in_bold=False)
                   if g and "floor" in ranks[g.key] else "")
        rows.append(row)
    return table(["implementation"] + [f"N={n:,}" for n in ns]
                 + [f"start {top:,} tasks", f"memory per task at {top:,}", "×floor"], rows)


def iter_cell(g: Group | None) -> str:
    if g is None:
        return ""
    if not g.ok:
        return g.statuses
    cold, warm = g.median("first_iter_s"), g.median("warm_iter_s")
    return f"{fmt_seconds(cold)} / {fmt_seconds(warm)}, {mib(g.median('peak_rss_bytes'))}"


def chain_table(groups: list[Group], n: int) -> str:
    chain, awaits = pick(groups, "chain", n), pick(groups, "chain-await", n)
    rows = [[impl, iter_cell(chain.get(impl)), iter_cell(awaits.get(impl))]
            for impl in sorted(set(chain) | set(awaits))]
    return table(["implementation", "chain", "chain-await"], rows)


def bounded_table(groups: list[Group], ranks: Ranks, n: int, small: int) -> str:
    buffers = sorted({g.buffer for g in groups if g.workload == "bounded" and g.n == n})
    cells = {b: pick(groups, "bounded", n, b) for b in buffers}
    few = pick(groups, "bounded", small, 1)
    go = {b: cells[b].get("go") for b in buffers}
    rows = []
    for impl in sorted({i for m in cells.values() for i in m}):
        row = [impl]
        for b in buffers:
            g = cells[b].get(impl)
            text = spread(g, "warm_iter_s", fmt_seconds) if g else ""
            base = go[b].median("warm_iter_s") if go[b] else None
            mine = g.median("warm_iter_s") if g else None
            if base and mine and impl != "go":
                text += f" ({mine / base:.2f}× go)"
            row.append(text)
        g = few.get(impl)
        row.append(spread(g, "warm_iter_s", fmt_seconds) if g else "")
        rows.append(row)
    return table(["implementation"] + [f"B={b}" for b in buffers] + [f"{small} producers, B=1"],
                 rows)


def skynet_table(groups: list[Group], ranks: Ranks, n: int) -> str:
    rows = []
    for impl, g in sorted(pick(groups, "skynet", n).items()):
        rows.append([impl, spread(g, "first_iter_s", fmt_seconds),
                     spread(g, "warm_iter_s", fmt_seconds),
                     spread(g, "peak_rss_bytes", mib),
                     fmt_ratio(ranks[g.key].get("floor"), best_in_bold=False)
                     if "floor" in ranks[g.key] else ""])
    return table(["implementation", "cold", "warm", "peak RSS", "×floor (warm)"], rows)


def scaling_table(groups: list[Group], workload: str, n: int) -> str:
    """Warm iteration per CPU count (run --cpus), and the speed-up from the
    fewest CPUs to the most."""
    members = [g for g in groups if g.workload == workload and g.n == n
               and g.param("cpus") is not None]
    cpus = sorted({g.param("cpus") for g in members})
    by = {(g.impl, g.param("cpus")): g for g in members}
    rows = []
    for impl in sorted({g.impl for g in members}):
        cells = [spread(by[(impl, c)], "warm_iter_s", fmt_seconds) if (impl, c) in by else ""
                 for c in cpus]
        lo, hi = by.get((impl, cpus[0])), by.get((impl, cpus[-1]))
        a = lo.median("warm_iter_s") if lo else None
        b = hi.median("warm_iter_s") if hi else None
        rows.append([impl] + cells + [f"{a / b:.2f}×" if a and b else ""])
    return table(["implementation"] + [f"{c} CPU{'s' if c > 1 else ''}" for c in cpus]
                 + [f"speed-up {cpus[0]} → {cpus[-1]}"], rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: readme_tables.py RUN_DIR", file=sys.stderr)
        return 2
    results = analyse(open_run_dir(argv[0]), leave_out=("skipped",))
    groups, ranks = results.groups, results.ranks
    present = {g.workload for g in groups}
    sections = [
        ("sleep", "sleep: peak RSS", lambda: sleep_table(groups, ranks)),
        ("chain", "chain and chain-await at N = 1,000,000", lambda: chain_table(groups, 1_000_000)),
        ("bounded", "bounded: warm iteration, 10,000 producers",
         lambda: bounded_table(groups, ranks, 10_000, 10)),
        ("skynet", "skynet: 10^6 leaves", lambda: skynet_table(groups, ranks, 1_000_000)),
    ]
    if any(g.param("cpus") is not None for g in groups):  # a run with --cpus
        sections = [(w, f"{w}: warm iteration against CPUs, N = {n:,}",
                     (lambda w=w, n=n: scaling_table(groups, w, n)))
                    for w, n in sorted({(g.workload, g.n) for g in groups
                                        if g.param("cpus") is not None and g.n})]
    for workload, title, render in sections:
        if workload in present:
            print(f"### {title}\n\n{render()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
