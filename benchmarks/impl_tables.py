"""The tables that describe the implementations, written from the impls.toml
files (their one source) into the docs, between marker comments:

    .venv/bin/python benchmarks/impl_tables.py          # rewrite the blocks
    .venv/bin/python benchmarks/impl_tables.py --check  # exit 1 if one is stale

- docs/implementations.md, "implementations": every implementation, its
  language, runtime, description and workloads;
- docs/protocol.md, "channels": the channel semantics per implementation,
  from each [[impl]]'s `channel.chain`, `channel.bounded` and
  `channel.notes` (`channel.same_as = "ID"` joins ID's row).

harness/tests/publish/test_generated_docs.py fails when a committed block differs
from what this writes.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import ROOT  # noqa: E402
from harness.core.registry import Impl, load_registry  # noqa: E402


def begin(name: str) -> str:
    return f"<!-- BEGIN {name}: written by benchmarks/impl_tables.py from the impls.toml files -->"


def end(name: str) -> str:
    return f"<!-- END {name} -->"


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])


def repository_impls() -> list[Impl]:
    """The repository's own implementations (not BENCH_IMPLS_PATH's)."""
    return [i for i in load_registry() if i.language.dir.parent == ROOT]


def channel_data(impls: list[Impl]) -> dict[str, dict[str, str]]:
    """Each implementation's `channel` table, which the registry leaves alone."""
    entries = {}
    for source in sorted({i.source for i in impls if i.source}):
        for entry in tomllib.loads(source.read_text()).get("impl", []):
            entries[entry["id"]] = entry.get("channel", {})
    return entries


def implementations_table(impls: list[Impl]) -> str:
    rows = [[f"`{i.id}`", i.language.name, i.runtime_label, i.description,
             ", ".join(i.workloads)] for i in impls]
    return table(["implementation", "language", "runtime", "description", "workloads"], rows)


def channels_table(impls: list[Impl]) -> str:
    """One row per implementation with channel data, in registry order,
    naming those that share it (channel.same_as)."""
    channel = channel_data(impls)
    floor = {i.id for i in impls if i.floor}
    names: dict[str, list[str]] = {}
    for impl in impls:
        data = channel.get(impl.id, {})
        if "same_as" in data:
            names.setdefault(data["same_as"], [data["same_as"]]).append(impl.id)
        elif data:
            names.setdefault(impl.id, [impl.id])
    rows = []
    for impl in impls:
        data = channel.get(impl.id, {})
        if data and "same_as" not in data:
            label = ", ".join(names[impl.id]) + (" (the floor)" if impl.id in floor else "")
            rows.append([label, data["chain"], data["bounded"], data["notes"]])
    return table(["implementation", "chain channel", "bounded, B = 0", "notes"], rows)


def blocks() -> dict[Path, dict[str, str]]:
    """Each file's generated blocks, by name."""
    impls = repository_impls()
    return {ROOT / "docs" / "implementations.md": {"implementations": implementations_table(impls)},
            ROOT / "docs" / "protocol.md": {"channels": channels_table(impls)}}


def rewritten(text: str, name: str, body: str) -> str:
    """text with the block between name's markers replaced by body."""
    head, found, rest = text.partition(begin(name) + "\n")
    if not found or end(name) not in rest:
        raise ValueError(f"no {begin(name)!r} ... {end(name)!r} markers")
    return head + begin(name) + "\n" + body + "\n" + rest[rest.index(end(name)):]


def expected(path: Path, generated: dict[str, str]) -> str:
    text = path.read_text()
    for name, body in generated.items():
        text = rewritten(text, name, body)
    return text


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print(__doc__, file=sys.stderr)
        return 2
    stale = []
    for path, generated in blocks().items():
        text = expected(path, generated)
        if text != path.read_text():
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text)
    for path in stale:
        print(f"{path}: {'stale' if check else 'rewritten'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
