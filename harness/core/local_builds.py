"""A runtime author's own build as a version: `IMPL@path:DIR`, where DIR is
a local source or build (a crate's checkout for the Rust implementations, a
GOROOT for go: impls.toml's [impl.versions] `path_install` says which). It
is built like a release, into its own folder under .versions/, cached by
the content it was built from, and recorded exactly: the path, and where
DIR is in a git checkout, its commit and whether the tree was dirty.

`IMPL@git:REV` with `--source DIR`: the commit REV names in the git
checkout DIR, checked out into a worktree of its own under .versions/ and
built from there as a local build; named by its commit (`git:` and 12 hex
digits) whatever REV was typed, cached by it."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

PREFIX = "path:"
GIT = "git:"
SHORT = 12  # a commit's digits in a label: unique in any repository of this century
# Folders a build writes into or that do not make the build: never hashed.
SKIPPED = frozenset({".git", "target", "node_modules", "__pycache__", ".hg"})
# Files up to this size are hashed by their bytes; larger ones (a toolchain's
# binaries, archives) by size and modification time, which any rebuild or
# copy changes: a GOROOT's 500 MB would otherwise be read at every run.
HASHED_BYTES = 1 << 20


def is_local(version: str) -> bool:
    return version.startswith(PREFIX)


def is_git(version: str) -> bool:
    return version.startswith(GIT)


def directory(version: str) -> Path:
    return Path(version[len(PREFIX):])


def normal(text: str) -> str:
    """`path:DIR` with DIR absolute and normalised, so that one folder typed
    two ways is one configuration."""
    return PREFIX + os.path.abspath(os.path.expanduser(text[len(PREFIX):]))


def digest(root: Path) -> str:
    """A hash of root (a file, or the tree under a folder): every file's
    relative path, and its bytes (or, past HASHED_BYTES, its size and
    modification time)."""
    h = hashlib.sha256()
    files = [root] if root.is_file() else []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        files += [Path(dirpath) / name for name in sorted(filenames)]
    for path in files:
        h.update(str(path.relative_to(root)).encode() + b"\0")
        try:
            st = path.stat()
            if st.st_size <= HASHED_BYTES:
                h.update(path.read_bytes())
            else:
                h.update(f"{st.st_size} {st.st_mtime_ns}".encode())
        except OSError:  # a dangling link, a file removed meanwhile
            h.update(b"?")
    return h.hexdigest()


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_state(root: Path) -> dict[str, Any]:
    """{"commit", "dirty"} where root is inside a git checkout (dirty: a
    change to a tracked file, or an untracked one, under root), else Nones."""
    if root.is_file():
        root = root.parent
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = _git(root, "status", "--porcelain", "--", ".")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def record(version: str) -> dict[str, Any]:
    """env.json's account of a local build: its path, commit and dirty flag."""
    root = directory(version)
    return {"path": str(root), **git_state(root)}


class GitError(Exception):
    """A revision that is not a commit of the checkout, or no checkout."""


def commit_of(source: Path, rev: str) -> tuple[str, str]:
    """(the full commit, its subject) that REV names in the checkout source."""
    if rev.startswith("-"):  # never an option of git's
        raise GitError(f"{rev!r} is not a revision")
    commit = _git(source, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if not commit:
        raise GitError(f"{rev!r} is not a commit of the git checkout {source}")
    subject = _git(source, "log", "-1", "--format=%s", commit) or ""
    # printed in tables and on the terminal: no control character gets there
    return commit, "".join(ch for ch in subject if ch.isprintable())


def first_parent_commits(source: Path, good: str, bad: str) -> list[str]:
    """good, then the first-parent commits after it up to bad, oldest first:
    what a bisect between two revisions searches."""
    text = _git(source, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    if text is None:
        raise GitError(f"cannot list the commits from {good} to {bad} in {source}")
    return [good] + text.split()


def check_out(source: Path, commit: str, where: Path) -> None:
    """A worktree of source at commit in where (kept for the next build of
    it); GitError says why not."""
    if (where / ".git").exists():
        return
    where.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["git", "-C", str(source), "worktree", "add", "--detach", "--force",
                           str(where), commit], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise GitError(f"git worktree add {commit[:SHORT]}: {lines[-1] if lines else 'failed'}")
