"""Facts about the machine and the project recorded with every run."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
from typing import Any

from . import ROOT

SECRET = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|AUTH", re.I)


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


def redact(env: dict[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if SECRET.search(k) else v) for k, v in sorted(env.items())}
