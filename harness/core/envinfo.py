"""Facts about the machine and the project recorded with every run."""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import subprocess
from typing import Any, Iterable

from .. import ROOT
from .formatting import fmt_share_tenths

# The variables that change how a runtime or the C library behaves, by name
# or prefix: the one list. env.json and results.json record their values and
# the report shows them; any other variable is recorded by name alone, its
# value never (people publish these files, and shells hold keys and passwords).
RUNTIME_NAMES = frozenset({
    "GOMAXPROCS", "GOGC", "GODEBUG", "GOMEMLIMIT", "GOEXPERIMENT", "GOTRACEBACK", "GOAMD64",
    "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "JAVA_HOME",
    "BUN_JSC_useJIT", "DENO_V8_FLAGS",
    # the BEAM's flags, read by erl (Elixir's programs are started by erl too)
    "ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS", "ELIXIR_ERL_OPTIONS",
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_BIND_NOW", "GLIBC_TUNABLES",
    "LC_ALL", "LANG", "LANGUAGE", "TZ", "PATH",
})
RUNTIME_PREFIXES = ("DOTNET_", "COMPlus_", "NODE_", "UV_", "PYTHON", "RUST_", "TOKIO_", "ASYNC_STD_",
                    "MALLOC_", "LC_")
# Even among those, a name like these is recorded without its value ...
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|PWD|CREDENTIAL|KEY|AUTH|COOKIE|SESSION|PRIVATE|"
                         r"LICEN[CS]E|CONNECTION|CONNSTR", re.I)
# ... and in a value, a URL's user:password@ (up to the last @ before the
# host: a password may hold / or @), and an option whose key names a secret
# (-Ddb.pwd=..., -Dnewrelic.config.license_key=..., Password=...; in a
# connection string) are masked. Masking too much only costs a value.
URL_USERINFO = re.compile(r"(?<=://)[^\s]*@")
SECRET_OPTION = re.compile(r"([\w.-]*(?:pass|pwd|secret|token|key|credential|licen[cs]e|auth|"
                           r"private|cookie|session)[\w.-]*\s*[=:])[^\s,;]+", re.I)
# In a TOML or JSON text: a key named like a secret, and its quoted value.
SECRET_ASSIGNMENT = re.compile(r"""(["']?[\w.-]*(?:pass|pwd|secret|token|key|credential|"""
                               r"""licen[cs]e|auth|private|cookie|session)[\w.-]*["']?\s*[=:]\s*)"""
                               r"""("[^"\n]*"|'[^'\n]*')""", re.I)
NOT_RECORDED = "<not recorded>"
# What stands for a masked credential, in env.json, in labels and in output.
MASK = "<redacted>"
# A secret shorter than this is not searched for in a program's output: it
# would match ordinary digits and words all over it.
MIN_SECRET = 4


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _os_name() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", platform.system())
    except OSError:
        return platform.system()


def host() -> dict[str, Any]:
    return {"hostname": socket.gethostname(), "cpu_model": _cpu_model(),
            "cores": os.cpu_count() or 0, "ram_bytes": _ram_bytes(),
            "kernel": platform.release(), "os": _os_name(),
            "python": platform.python_version()}


def ram_bytes() -> int:
    return _ram_bytes()


def usable_cores() -> int:
    """The cores this process may run on: its affinity, as taskset sets it
    (--cpus is checked against it; builds and plots use every one)."""
    return len(os.sched_getaffinity(0))


def git() -> dict[str, Any]:
    def run(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def runtime_variable(name: str) -> bool:
    """Whether a variable changes how a runtime or the C library behaves."""
    return name in RUNTIME_NAMES or name.startswith(RUNTIME_PREFIXES)


# What the measured programs get besides the runtime variables (pyperf's
# practice: its workers get a small allow-list of the environment, and
# --inherit-environ adds names). Builds get the whole environment.
PROGRAM_BASE = frozenset({"HOME", "TMPDIR", "USER", "LOGNAME"})


def passed_to_programs(name: str, inherit: Iterable[str] = ()) -> bool:
    """Whether a measured program gets this variable: a runtime variable not
    named like a secret, or one of PROGRAM_BASE, or named by --inherit-env."""
    return name in inherit or name in PROGRAM_BASE or recorded(name)


def recorded(name: str) -> bool:
    """Whether a variable's value is recorded (and shown by the report): a
    runtime variable not named like a secret."""
    return runtime_variable(name) and not SECRET_NAME.search(name)


def mask_value(value: str) -> str:
    """A value with the credentials in it masked: a URL's user:password@
    and the value of an option whose key names a secret."""
    return SECRET_OPTION.sub(lambda m: m.group(1) + MASK, URL_USERINFO.sub(MASK + "@", value))


def redact(env: dict[str, str]) -> dict[str, str]:
    """What of the programs' environment may be written down: every name,
    sorted; the value of each variable that affects a runtime (recorded()),
    with credentials in it masked; NOT_RECORDED for every other value."""
    return {k: (mask_value(v) if recorded(k) else NOT_RECORDED) for k, v in sorted(env.items())}


def secrets_in(env: dict[str, str], argv: Iterable[str] = ()) -> list[str]:
    """The secret-looking values handed to a program, by the rules above:
    the value of each variable named like a secret, and in any value or
    argument a URL's user:password (and the password alone) and a secret
    option's value; each also as JSON spells it (a program printing its
    environment as JSON). Longest first: one holding another goes whole."""
    found = {value for name, value in env.items() if SECRET_NAME.search(name)}
    for text in [*env.values(), *argv]:
        for m in URL_USERINFO.finditer(text):
            userinfo = m.group(0)[:-1]
            found |= {userinfo, userinfo.partition(":")[2]}
        found |= {m.group(0)[len(m.group(1)):] for m in SECRET_OPTION.finditer(text)}
    found |= {json.dumps(s)[1:-1] for s in found}
    return sorted((s for s in found if len(s) >= MIN_SECRET), key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Program output with every secret of secrets_in() masked."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def mask_text(text: str) -> str:
    """A file's text (a --registry file, recorded in env.json) with each
    credential masked: mask_value's, and the quoted value of a key named
    like a secret (`API_TOKEN = "..."`)."""
    return SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + f'"{MASK}"', mask_value(text))


# ---------------------------------------------------------------- the machine's state
# What makes timings less stable, read as pyperf's `system show` reads it;
# nothing is changed on the machine. Each reading is None where the machine
# does not expose it (a VM has no cpufreq, say).

def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def cpu_times() -> tuple[int, int] | None:
    """(steal, total) clock ticks of all CPUs since boot, from /proc/stat:
    steal is the time a hypervisor gave this VM's CPUs to someone else."""
    line = (_read("/proc/stat") or "").splitlines()[:1]
    fields = line[0].split()[1:] if line and line[0].startswith("cpu ") else []
    if len(fields) < 8:
        return None
    ticks = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


def steal_frac(start: tuple[int, int] | None, end: tuple[int, int] | None) -> float | None:
    """The share of the CPUs' time stolen between two cpu_times() readings."""
    if start is None or end is None or end[1] <= start[1]:
        return None
    return (end[0] - start[0]) / (end[1] - start[1])


def machine_state() -> dict[str, Any]:
    governors = sorted({g for cpu in range(os.cpu_count() or 0) if (g := _read(
        f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")) is not None})
    no_turbo, boost = (_read("/sys/devices/system/cpu/intel_pstate/no_turbo"),
                       _read("/sys/devices/system/cpu/cpufreq/boost"))
    turbo = (no_turbo == "0") if no_turbo is not None else (boost == "1") \
        if boost is not None else None
    aslr = _read("/proc/sys/kernel/randomize_va_space")
    flags = next((line for line in (_read("/proc/cpuinfo") or "").splitlines()
                  if line.startswith("flags")), "")
    return {"governor": ",".join(governors) or None, "turbo": turbo,
            "aslr": int(aslr) if aslr and aslr.isdigit() else None,
            "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            "virtual_machine": " hypervisor" in flags if flags else None,
            "isolated_cpus": _read("/sys/devices/system/cpu/isolated") or None}


# Above this share of stolen CPU time a VM's timings are noticeably less stable.
STEAL_NOTICE = 0.01


def instability(state: dict[str, Any], steal: float | None) -> list[str]:
    """Sentences naming what in the machine's state makes figures less
    stable (the report's warnings); none for a quiet, pinned machine."""
    out = []
    if state.get("governor") not in (None, "performance"):
        out.append(f"the CPU frequency governor is {state['governor']} (not performance): "
                   "the clock speed moves with the load")
    if state.get("turbo"):
        out.append("turbo boost is on: the clock speed depends on temperature and the other "
                   "cores' load")
    if state.get("virtual_machine"):
        stolen = (f", and the hypervisor took {fmt_share_tenths(steal)} of its CPU time during "
                  "the run") \
            if steal is not None and steal >= STEAL_NOTICE else ""
        out.append(f"this is a virtual machine whose CPUs may be shared{stolen}")
    elif steal is not None and steal >= STEAL_NOTICE:
        out.append(f"{fmt_share_tenths(steal)} of the CPU time was stolen by a hypervisor during "
                   "the run")
    if state.get("clocksource") not in (None, "tsc"):
        out.append(f"the clock source is {state['clocksource']} (not tsc): reading the time "
                   "costs more")
    return out
