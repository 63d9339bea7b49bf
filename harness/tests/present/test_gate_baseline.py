"""The gate within one run (compare RUN --baseline IMPL, and run --gate's
decision): a calibration run given on the command line, a commit or a
variant gated with its stock build's floors, and a baseline without an ok
run leaving the gate undecided. Synthetic runs with known spreads."""

from __future__ import annotations

from harness import cli
from harness.analyse import gate, noise
from harness.present import compare

from .test_compare import BOUNDED, CHAIN, MS, base, rows, write_run  # noqa: F401 (base: a fixture)

HEAD = "fake-good[FAKE_AB=1]"


def _named(config: dict, impl: str) -> dict:
    return {**config, "impl": impl}


def _calibration(base) -> object:
    """chain's runs within ±0.5%, bounded's spread ±40%: 5 runs a name."""
    return write_run(base, rows(CHAIN, k=5), rows(_named(CHAIN, "fake-good" + noise.AA), k=5),
                     rows(BOUNDED, k=5, width=0.4),
                     rows(_named(BOUNDED, "fake-good" + noise.AA), k=5, width=0.4))


def test_compare_takes_a_calibration_run_on_the_command_line(base, capsys) -> None:
    calib = _calibration(base)
    old = write_run(base, rows(CHAIN), rows(BOUNDED))
    new = write_run(base, rows(CHAIN, warm_iter_s=2 * MS), rows(BOUNDED, warm_iter_s=3 * MS))
    status = cli.main(["compare", str(old), str(new), "--fail-above", "5%",
                       "--calibration", str(calib)])
    out = capsys.readouterr().out
    assert status == 1 and "not gateable at 5% here: 3 headline figures" in out
    assert cli.main(["compare", str(old), str(new), "--calibration", str(calib)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give --fail-above PCT too" in err
    assert cli.main(["compare", str(old), str(new), "--fail-above", "5%",
                     "--calibration", str(base / "nowhere")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_a_variant_is_gated_with_its_stock_builds_floors(base) -> None:
    """run --gate's two names within one run: the candidate, a variant of
    fake-good, is not in the calibration, whose stock fake-good's noise
    stands in: bounded's figures are named with their floors, chain's
    slower warm iteration fails over a family of 3."""
    calib = _calibration(base)
    run = write_run(base, rows(CHAIN), rows(BOUNDED),
                    rows(_named(CHAIN, HEAD), warm_iter_s=2 * MS),
                    rows(_named(BOUNDED, HEAD), warm_iter_s=3 * MS))
    v = compare.compare_baseline(run, "fake-good", 0.05, calibration=calib)
    assert {(c.key.impl, c.key.workload, ch.metric) for c, ch in
            v.gated(gate.NOT_GATEABLE)} == {(HEAD, "bounded", m) for m in (
                "first_iter_s", "warm_iter_s", "peak_rss_bytes")}
    assert v.family == 3 and v.exit_status == 1
    assert "floor +" in compare.render(v)
    assert compare.compare_baseline(run, "fake-good", 0.05).family == 6  # no calibration


def test_a_baseline_without_an_ok_run_leaves_the_gate_undecided(base) -> None:
    """The candidate ran chain, the baseline only crashed there: nothing to
    judge it against, so the gate cannot pass (between two runs, a
    configuration with no ok run in OLD has nothing to lose, as before)."""
    run = write_run(base, rows(CHAIN, status="crashed"), rows(BOUNDED),
                    rows(_named(CHAIN, HEAD)), rows(_named(BOUNDED, HEAD)))
    v = compare.compare_baseline(run, "fake-good", 0.05)
    assert [c.key.workload for c in v.unjudged] == ["chain"]
    assert v.exit_status == 3 and not v.gated(gate.UNDECIDED)
    text = compare.render(v)
    assert ("UNDECIDED (exit 3) (--fail-above 5%): no headline figure is shown worse by more "
            "than 5%, but 1 configuration has no ok run of the baseline, fake-good, to judge "
            "against:") in text
    assert f"  {HEAD} chain N=5: the baseline 6 crashed, this one 6 ok" in text
    assert compare.compare_baseline(run, "fake-good").exit_status == 0  # no gate, no verdict


def _failed(config: dict, k: int, first: int, status: str = "crashed") -> list[dict]:
    """k runs of config that did not end ok, numbered from `first`."""
    return [{**r, "rep": first + i} for i, r in enumerate(rows(config, k=k, status=status))]


def test_a_candidate_that_failed_where_the_baseline_did_not_fails_the_gate(base) -> None:
    """Issue 51: six ok runs a side whose figures all pass, and one run of
    the candidate that crashed where the baseline never failed: the gate
    fails (exit 1) and says why. A skipped run was never made: no effect."""
    candidate = _named(CHAIN, HEAD)
    run = write_run(base, rows(CHAIN), rows(candidate), _failed(candidate, 1, 7),
                    _failed(candidate, 1, 8, status="skipped"))
    v = compare.compare_baseline(run, "fake-good", 0.05)
    assert len(v.gated(gate.PASSES)) == 3 and v.exit_status == 1
    (reason,) = v.failures
    assert reason.endswith(": 6 ok → 6 ok, 1 crashed, 1 skipped, failed runs in the new run "
                           "where the old had none")
    assert "FAIL (--fail-above 5%): 1 reason:" in compare.render(v)
    skipped = write_run(base, rows(CHAIN), rows(candidate), _failed(candidate, 1, 7, "skipped"))
    assert compare.compare_baseline(skipped, "fake-good", 0.05).exit_status == 0


def test_a_candidate_failing_more_often_than_a_flaky_baseline_is_undecided(base) -> None:
    """Both sides failed some runs: a larger share of the candidate's
    leaves the gate undecided (exit 3), never passed; the same share or a
    smaller one is the baseline's own flakiness, and the figures decide."""
    candidate = _named(CHAIN, HEAD)
    run = write_run(base, rows(CHAIN), _failed(CHAIN, 1, 7), rows(candidate),
                    _failed(candidate, 2, 7, status="timeout"))
    v = compare.compare_baseline(run, "fake-good", 0.05)
    assert not v.failures and [c.key.impl for c in v.failing_more] == [HEAD]
    assert v.exit_status == 3
    assert ("1 configuration failed in both runs, more often in the new one:"
            in compare.render(v))
    same = write_run(base, rows(CHAIN), _failed(CHAIN, 1, 7), rows(candidate),
                     _failed(candidate, 1, 7))
    assert compare.compare_baseline(same, "fake-good", 0.05).exit_status == 0
