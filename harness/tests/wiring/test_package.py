"""The harness is a package: `pip install .` in a fresh venv gives a
console script that works on the repository it is started in."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

from harness import __version__

from ..conftest import ROOT


def test_pip_install_gives_a_working_console_script(tmp_path: Path) -> None:
    # Built from a copy: a build in the tree would leave build/ and
    # *.egg-info behind (and mark the tree dirty in later runs' env.json).
    src = tmp_path / "src"
    shutil.copytree(ROOT / "harness", src / "harness",
                    ignore=shutil.ignore_patterns("__pycache__", "tests", "launch", ".launch.*"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # pip fetches setuptools from PyPI to build it; the dependencies come
    # from the harness's environment (installing them is pip's business).
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps",
                           "--disable-pip-version-check", str(src)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    script = venv / "bin" / "bench-harness"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(site.getsitepackages()))
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.split()[-1] == __version__, version
    listed = subprocess.run([str(script), "list"], capture_output=True, text=True, env=env,
                            cwd=ROOT / "docs")  # found from a folder inside the repository
    assert listed.returncode == 0, listed.stderr
    assert "go" in listed.stdout and "http" in listed.stdout
    installed = subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import harness; print(harness.__file__)"],
                               capture_output=True, text=True, cwd=tmp_path, env=env)
    assert str(venv) in installed.stdout  # the installed copy ran, not the tree
