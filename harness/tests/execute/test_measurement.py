"""Peak RSS is the program's own: checked against programs of known size."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.core.registry import program_env
from harness.processes.launcher import run_process

from ..conftest import tool_missing

TOUCH_C = r"""
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    size_t bytes = (size_t)atol(argv[1]) << 20;
    char *p = malloc(bytes);
    memset(p, 1, bytes);
    return p[bytes / 2] == 1 ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def touch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("touch") / "touch.c"
    src.write_text(TOUCH_C)
    exe = src.with_suffix("")
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    return exe


def measure(argv: list[str]) -> int:
    out = run_process(argv, program_env(), "/", 60, None, 0.01)
    assert out.exit_code == 0 and out.peak_rss_method == "wait4-launcher"
    assert out.peak_rss_bytes is not None
    return out.peak_rss_bytes


def test_trivial_program_reads_under_3_mb() -> None:
    assert measure([shutil.which("true") or "/bin/true"]) < 3 * 2**20


@pytest.mark.parametrize("mib", [64, 300])
def test_touched_memory_reads_within_3_percent(touch: Path, mib: int) -> None:
    peak = measure([str(touch), str(mib)])
    assert abs(peak - mib * 2**20) <= 0.03 * mib * 2**20, peak / 2**20


def test_reading_does_not_carry_the_parents_memory(touch: Path) -> None:
    ballast = bytearray(200 * 2**20)  # the harness process grows; the reading must not
    ballast[::4096] = b"x" * len(ballast[::4096])
    assert measure([str(touch), "16"]) < 20 * 2**20


def test_sampler_sees_rss_and_threads(touch: Path) -> None:
    out = run_process(["python3", "-c", "import threading,time\n"
                       "b = bytearray(80 << 20)\n"
                       "ts = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(5)]\n"
                       "[t.start() for t in ts]; [t.join() for t in ts]"],
                      program_env(), "/", 60, None, 0.01)
    assert out.max_threads is not None and out.max_threads >= 6
    assert out.sampled_peak_rss_bytes is not None and out.sampled_peak_rss_bytes > 80 << 20
    assert len(out.samples) > 20


def test_the_kernels_counters_are_the_program_trees(touch: Path) -> None:
    """Touching 64 MiB takes at least one minor fault per 4 KiB page (about
    16,000), in the child the program waited for too; a process that sleeps
    blocks, a voluntary context switch; nothing is read from disk."""
    out = run_process(["sh", "-c", f"{touch} 64; sleep 0.05"], program_env(), "/", 60, None, 0.01)
    assert out.exit_code == 0
    assert out.counters.minor_faults >= (64 << 20) // 4096
    assert out.counters.ctx_switches_voluntary >= 1
    assert out.counters.ctx_switches_involuntary >= 0
    assert out.counters.major_faults >= 0
    counted = out.counters.counted()
    rusage = {"ctx_switches_voluntary", "ctx_switches_involuntary", "minor_faults", "major_faults"}
    assert rusage <= set(counted)
    assert not any(c.startswith("perf_") for c in counted)  # only with --counters
    if out.containment == "cgroup":  # its cpu.stat counts the whole tree
        assert out.counters.cgroup_cpu_user_s + out.counters.cgroup_cpu_sys_s > 0
        if out.counters.cgroup_page_faults is not None:  # memory.stat: with the memory controller
            assert out.counters.cgroup_page_faults >= (64 << 20) // 4096


@pytest.fixture(scope="module")
def perf() -> str:
    from harness import UsageError
    from harness.execute.perfstat import find_perf
    try:
        return find_perf()  # installs linux-perf where it is missing, announced
    except UsageError as exc:
        if shutil.which("perf") is None:
            tool_missing("perf", str(exc))
        # perf is here, but this kernel or VM will not let it count: no tool is missing
        pytest.skip(f"perf is installed but cannot count here: {exc}")


def test_perf_counts_the_program_tree_and_is_not_measured(touch: Path, perf: str) -> None:
    """perf stat, attached to the forked child before its exec, counts the
    child the program waited for too (64 MiB touched: 16,000 faults), while
    the peak RSS stays the program's own: perf is not in the measured tree."""
    argv = ["sh", "-c", f"{touch} 64; sleep 0.05"]
    out = run_process(argv, program_env(), "/", 60, None, 0.01, perf=perf)
    assert out.exit_code == 0 and out.strays == 0
    assert out.counters.perf_page_faults >= (64 << 20) // 4096
    assert out.counters.perf_context_switches >= 1
    assert out.counters.perf_cpu_migrations >= 0
    assert out.counters.perf_task_clock_s > 0
    assert abs(out.peak_rss_bytes - 64 * 2**20) <= 0.03 * 64 * 2**20
    hardware = subprocess.run([perf, "stat", "-x,", "-e", "instructions", "true"],
                              capture_output=True, text=True)
    counted = "<not supported>" not in hardware.stderr and ",instructions" in hardware.stderr
    assert (out.counters.perf_instructions is not None) == counted
    if counted:
        assert out.counters.perf_instructions > 0


def test_perf_that_cannot_count_is_one_line(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import UsageError
    from harness.execute import perfstat
    fake = tmp_path / "perf"
    fake.write_text("#!/bin/sh\necho 'Error: No permission to enable task-clock event.' >&2\nexit 255\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError, match="perf cannot count here .*perf_event_paranoid"):
        perfstat.find_perf()
    fake.unlink()
    monkeypatch.setenv("BENCH_NO_SYSTEM_INSTALL", "1")
    with pytest.raises(UsageError, match="BENCH_NO_SYSTEM_INSTALL=1 refuses"):
        perfstat.find_perf()


def test_run_counters_fills_the_perf_columns(tmp_path: Path, perf: str) -> None:
    """`run --counters`: every ok row has perf's software events (cycles and
    instructions where the machine has them); without it, none."""
    import csv

    from ..conftest import harness
    out = tmp_path / "results"
    for extra in ([], ["--counters"]):
        proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "5", "--repeat", "2",
                       "--out", str(out), "--no-report", *extra)
        assert proc.returncode == 0, proc.stderr
        rows = list(csv.DictReader((out / "latest" / "runs.csv").open()))
        assert rows and all(r["status"] == "ok" for r in rows)
        for r in rows:
            filled = {c for c in ("perf_task_clock_s", "perf_context_switches",
                                  "perf_cpu_migrations", "perf_page_faults") if r[c] != ""}
            assert filled == (set() if not extra else {"perf_task_clock_s", "perf_context_switches",
                                                       "perf_cpu_migrations", "perf_page_faults"})
            assert r["ctx_switches_voluntary"] != ""  # wait4's, always
