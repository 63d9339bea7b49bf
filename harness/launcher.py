"""Build and locate the native launcher (launcher/launch.c)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "launcher" / "launch.c"
BINARY = SOURCE.with_suffix("")
METHOD = "wait4-launcher"


class LauncherError(Exception):
    pass


def ensure_launcher() -> Path:
    """Compile the launcher if it is missing or older than its source."""
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise LauncherError("no C compiler (cc, gcc or clang) to build harness/launcher/launch.c")
    # Built beside and renamed into place: another harness may be using it.
    tmp = BINARY.with_name(f".launch.{os.getpid()}")
    proc = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise LauncherError(f"building the launcher failed: {proc.stderr.strip()}")
    tmp.replace(BINARY)
    return BINARY
