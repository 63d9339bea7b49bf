"""The docs' implementation tables are written from the impls.toml files
(benchmarks/impl_tables.py): the committed blocks must be what it writes now."""

from __future__ import annotations

import pytest

from benchmarks import impl_tables
from harness import ROOT


@pytest.mark.parametrize("path", list(impl_tables.blocks()), ids=lambda p: p.name)
def test_committed_blocks_are_what_the_generator_writes(path) -> None:
    generated = impl_tables.blocks()[path]
    assert path.read_text() == impl_tables.expected(path, generated), (
        f"{path.relative_to(ROOT)} is stale: run .venv/bin/python benchmarks/impl_tables.py")


def test_every_program_implementation_has_a_channel_row() -> None:
    impls = impl_tables.repository_impls()
    channel = impl_tables.channel_data(impls)
    ids = {i.id for i in impls}
    for impl in impls:
        if impl.workloads != ["http"]:
            data = channel.get(impl.id, {})
            assert data.get("same_as") in ids or {"chain", "bounded", "notes"} <= set(data), impl.id


def test_a_block_without_its_markers_is_an_error() -> None:
    with pytest.raises(ValueError):
        impl_tables.rewritten("no markers here", "channels", "| x |")
