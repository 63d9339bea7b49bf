from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Iterator

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKES = Path(__file__).resolve().parent / "fakes"


def harness(*args: str, extra_env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BENCH_IMPLS_PATH=str(FAKES), **(extra_env or {}))
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def fake_registry(folder: Path, language: str, impl_id: str, language_extra: str = "",
                  impl_extra: str = "") -> Path:
    """An impls.toml of its own (for --registry): one language whose one
    implementation is the good fake, running chain; extra TOML lines for the
    [language] table and the [[impl]]."""
    path = folder / "impls.toml"
    path.write_text(f"""[language]
name = "{language}"
detect = ["{{python}}", "-c", "print('Python')"]
build = ["{{python}}", "-c", "pass"]
test = ["{{python}}", "-c", "pass"]
{language_extra}

[[impl]]
id = "{impl_id}"
run = ["{{python}}", "{FAKES / 'fake'}/fake.py", "--mode", "good"]
workloads = ["chain"]
{impl_extra}
""")
    return path


def read_rows(out: Path) -> list[dict[str, str]]:
    with (out / "latest" / "runs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "results"


def leftovers(token: str) -> list[psutil.Process]:
    """Processes still alive from a test's fakes: they inherit FAKE_TOKEN,
    so other sessions running the same tests on the machine do not count."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("FAKE_TOKEN") == token:
                found.append(p)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def cmdline(p: psutil.Process) -> list[str]:
    """p's command line, or [] once it has ended or is a zombie (it may end
    between being listed and being asked)."""
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def gone_within(token: str, seconds: float) -> list[psutil.Process]:
    """The test's processes still alive after waiting up to `seconds` for them to go."""
    deadline = time.monotonic() + seconds
    while (left := leftovers(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def token() -> Iterator[str]:
    """A FAKE_TOKEN for the processes a test starts; whatever of them is
    still alive at the end is killed (only what this test started)."""
    value = uuid.uuid4().hex
    yield value
    for p in leftovers(value):
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
