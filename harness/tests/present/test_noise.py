"""Figures the machine cannot gate (issue 51): a calibration run's A/A noise
gives each headline figure a floor; compare names those whose floor is
above PCT, with it, and leaves them out of the gate. Synthetic runs with
known spreads."""

from __future__ import annotations

import math
import re

import pytest

from harness import UsageError
from harness.analyse import gate, noise
from harness.present import compare

from .test_compare import BOUNDED, CHAIN, MS, base, rows, write_run  # noqa: F401 (base: a fixture)

AA = {**CHAIN, "impl": "fake-good" + noise.AA}
AA_BOUNDED = {**BOUNDED, "impl": "fake-good" + noise.AA}


def test_a_floor_is_the_bound_nine_in_ten_splits_stay_within() -> None:
    tight = [1.0 + i / 1000 for i in range(10)]  # within 0.9%
    assert 0 < noise.floor(tight, 5, False) < 0.01
    bimodal = [1.0, 4.0] * 5
    assert noise.floor(bimodal, 5, False) >= 3  # 4/1: a floor of +300%
    assert noise.floor(bimodal, 5, True) >= 3  # higher is better: 4/1 worse the other way
    assert noise.floor(tight, 6, False) == math.inf  # 10 runs cannot make 6 a side
    assert noise.floor(tight, 3, False) > noise.floor(tight, 5, False)  # fewer runs, wider


def test_compare_names_what_the_calibration_cannot_gate(base) -> None:
    """The calibration: chain's runs within ±0.5%, bounded's spread ±40%,
    5 runs a name. NEW: chain's warm iteration 2x slower, bounded's 3x. With
    the calibration, bounded's three figures are not gateable at 5% (named
    with their floors at 5 runs a side, neither failed nor undecided); chain
    fails over a family of 3."""
    calib = write_run(base, rows(CHAIN, k=5), rows(AA, k=5),
                      rows(BOUNDED, k=5, width=0.4), rows(AA_BOUNDED, k=5, width=0.4))
    old = write_run(base, rows(CHAIN), rows(BOUNDED))
    new = write_run(base, rows(CHAIN, warm_iter_s=2 * MS), rows(BOUNDED, warm_iter_s=3 * MS))
    v = compare.compare_dirs(old, new, 0.05, calibration=calib)
    named = v.gated(gate.NOT_GATEABLE)
    assert {(c.key.workload, ch.metric) for c, ch in named} == {
        ("bounded", m) for m in ("first_iter_s", "warm_iter_s", "peak_rss_bytes")}
    assert all(v.floor_of(c, ch) > 0.3 for c, ch in named)
    assert v.family == 3 and v.exit_status == 1
    assert {(c.key.workload, ch.metric) for c, ch in v.gated(gate.FAILS)} == {
        ("chain", "warm_iter_s")}
    text = compare.render(v)
    assert "not gateable at 5% here: 3 headline figures whose no-change comparisons" in text
    assert re.search(r"fake-good bounded N=5 B=1 warm iter: floor \+\d+\.\d% at 5 runs a side",
                     text)
    # without the calibration the same bounded figure is gated, and fails too
    plain = compare.compare_dirs(old, new, 0.05)
    assert plain.family == 6 and not plain.gated(gate.NOT_GATEABLE)


def test_a_run_without_an_a_a_pair_is_not_a_calibration(base) -> None:
    plain = write_run(base, rows(CHAIN, k=5))
    with pytest.raises(UsageError, match="not a run of the calibrate suite"):
        compare.calibration_noise(plain)
