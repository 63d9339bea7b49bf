"""What env.json says about one `run` invocation, read from the machine,
the toolchains and the implementations: at its start (the command, the
toolchains, the programs' environment, the registries, each variant) and
at its end (the runtimes' versions, the load, the hypervisor's share)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..core.envinfo import (cpu_times, git, machine_state, mask_text, mask_value, redact,
                            steal_frac)
from ..core.registry import Impl, languages, program_env
from ..core.schema import RecordedSettings, VariantRecord
from ..execute.machineload import load_avg_1m
from ..execute.toolchains import detect_runtimes, detect_toolchain
from ..plan.settings import Settings
from .rundir import RunDir, RunDirError, finish_invocation, invocation, start_invocation


def registries(s: Settings) -> dict[str, str]:
    """The --registry files' contents: a run says how its programs were
    declared (credentials in them masked, envinfo.mask_text)."""
    out = {}
    for name in s.registries:
        path = Path(name).resolve()
        try:
            out[str(path)] = mask_text(path.read_text())
        except OSError:
            out[str(path)] = ""
    return out


def variant_record(impl: Impl) -> dict[str, Any]:
    """env.json's `variants` entry: what a variant or release is, with a
    credential in a setting masked as in its label."""
    return VariantRecord(impl.base, impl.release or None,
                         {k: mask_value(v) for k, v in impl.settings_env},
                         [mask_value(f) for f in impl.flags], impl.local or None).as_json()


def start_run(env: dict[str, Any], s: Settings, impls: list[Impl], recorded: RecordedSettings,
              resume: bool) -> tuple[int, int] | None:
    """This invocation at the top of env (recorded: its settings as the
    plan ran them); returns the CPU times end_run measures the steal from."""
    start_invocation(
        env, invocation(sys.argv, resume, git(), [i.id for i in impls], recorded,
                        load_avg_1m()),
        toolchains={lang.name: detect_toolchain(lang).version or None for lang in languages(impls)},
        program_env=redact(program_env(inherit=s.inherit_env)), registries=registries(s),
        floor_impls=[i.id for i in impls if i.floor], machine_state=machine_state(),
        variants={i.id: variant_record(i) for i in impls if i.id != i.base})
    return cpu_times()


def end_run(env: dict[str, Any], impls: list[Impl], ticks: tuple[int, int] | None) -> None:
    """The runtimes' versions (from the built programs), the load and the
    hypervisor's share since start_run's ticks."""
    finish_invocation(env, detect_runtimes(impls), load_avg_1m(), steal_frac(ticks, cpu_times()))


def write_env(run: RunDir, env: dict[str, Any]) -> None:
    try:
        run.write_env(env)
    except OSError as exc:
        raise RunDirError(f"cannot write {run.env_path}: {exc.strerror or exc}") from None
