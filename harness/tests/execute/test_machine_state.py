"""The machine's state, as pyperf records it: read, recorded, and named
when it makes figures less stable. Readings are faked: nothing here depends
on the machine the tests run on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core import envinfo

from ..conftest import harness


def fake_files(monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    monkeypatch.setattr(envinfo, "_read", lambda path: files.get(path))
    monkeypatch.setattr(envinfo.os, "cpu_count", lambda: 2)


def test_a_tuned_bare_machine() -> None:
    state = {"governor": "performance", "turbo": False, "aslr": 2, "clocksource": "tsc",
             "virtual_machine": False, "isolated_cpus": "1"}
    assert envinfo.instability(state, 0.0) == []


def test_a_laptop_like_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = "/sys/devices/system/cpu"
    fake_files(monkeypatch, {
        f"{cpu}/cpu0/cpufreq/scaling_governor": "powersave",
        f"{cpu}/cpu1/cpufreq/scaling_governor": "powersave",
        f"{cpu}/intel_pstate/no_turbo": "0",
        "/proc/sys/kernel/randomize_va_space": "2",
        "/sys/devices/system/clocksource/clocksource0/current_clocksource": "hpet",
        "/proc/cpuinfo": "processor : 0\nflags : fpu vme sse2\n"})
    state = envinfo.machine_state()
    assert state == {"governor": "powersave", "turbo": True, "aslr": 2, "clocksource": "hpet",
                     "virtual_machine": False, "isolated_cpus": None}
    said = " | ".join(envinfo.instability(state, None))
    assert "governor is powersave" in said and "turbo boost is on" in said and "hpet" in said


def test_a_virtual_machine_with_stolen_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_files(monkeypatch, {"/proc/cpuinfo": "flags : fpu hypervisor sse2\n",
                             "/proc/stat": "cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 1 2 3\n"})
    state = envinfo.machine_state()
    assert state["virtual_machine"] is True and state["governor"] is None
    assert state["turbo"] is None
    assert envinfo.cpu_times() == (35, 1000)
    assert envinfo.steal_frac((35, 1000), (55, 2000)) == pytest.approx(0.02)
    assert envinfo.steal_frac(None, (1, 2)) is None
    [line] = envinfo.instability(state, 0.02)
    assert "virtual machine" in line and "2.0%" in line
    assert "took" not in envinfo.instability(state, 0.001)[0]


def test_a_run_records_the_state_and_the_steal(tmp_path: Path) -> None:
    out = tmp_path / "results"
    proc = harness("run", "--impl", "fake-good", "--workload", "chain", "--n", "5", "--repeat",
                   "1", "--out", str(out), "--no-report")
    assert proc.returncode == 0, proc.stderr
    env = json.loads((out / "latest" / "env.json").read_text())
    assert set(env["machine_state"]) == {"governor", "turbo", "aslr", "clocksource",
                                         "virtual_machine", "isolated_cpus"}
    assert "steal_frac" in env["invocations"][-1]


def test_the_report_names_what_makes_figures_less_stable() -> None:
    from harness.analyse.analysis import warnings
    from harness.core.schema import Env
    env = Env({"finished_at": "x", "invocations": [{"steal_frac": 0.05}],
               "machine_state": {"governor": "powersave", "virtual_machine": True}})
    said = [w for w in warnings([], env) if w.startswith("The machine's state")]
    assert len(said) == 2 and "powersave" in said[0] and "5.0%" in said[1]
    quiet = Env({"finished_at": "x", "machine_state": {
        "governor": "performance", "turbo": False, "virtual_machine": False, "clocksource": "tsc"}})
    assert not [w for w in warnings([], quiet) if w.startswith("The machine's state")]
