"""Facts about the machine and the project recorded with every run."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
from typing import Any

from . import ROOT

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
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|KEY|AUTH|COOKIE|SESSION|PRIVATE", re.I)
# ... and in a value, a URL's user:password@ and a "...password=..." option are masked.
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
SECRET_OPTION = re.compile(r"([\w.-]*(?:passw|secret|token|apikey|api_key|credential)[\w.-]*[=:])"
                           r"[^\s,;]+", re.I)
NOT_RECORDED = "<not recorded>"


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


def recorded(name: str) -> bool:
    """Whether a variable's value is recorded (and shown by the report): a
    runtime variable not named like a secret."""
    return runtime_variable(name) and not SECRET_NAME.search(name)


def _mask(value: str) -> str:
    return SECRET_OPTION.sub(r"\1<redacted>", URL_USERINFO.sub("<redacted>@", value))


def redact(env: dict[str, str]) -> dict[str, str]:
    """What of the programs' environment may be written down: every name,
    sorted; the value of each variable that affects a runtime (recorded()),
    with credentials in it masked; NOT_RECORDED for every other value."""
    return {k: (_mask(v) if recorded(k) else NOT_RECORDED) for k, v in sorted(env.items())}
