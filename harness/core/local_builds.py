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
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from .. import UsageError
from ..processes.children import run_contained

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
    """A hash of root (a file, or the tree under a folder): every entry's
    relative path, and a file's bytes (or, past HASHED_BYTES, its size and
    modification time), a link's target. Nothing but a regular file is ever
    opened: a FIFO, socket or device (which reading would block on, or
    read for ever) is a UsageError, as is root being one."""
    h = hashlib.sha256()
    try:
        kind = root.stat().st_mode  # root itself as named: a link to an interpreter is its file
    except OSError as exc:
        raise UsageError(f"{root}: {exc.strerror or exc}") from None
    if stat.S_ISREG(kind):
        _hash_entry(h, root, root, kind)
        return h.hexdigest()
    if not stat.S_ISDIR(kind):
        raise UsageError(_not_a_file(root, kind))
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        # a link to a folder is hashed as a link, never followed
        links = [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED and d not in links)
        for name in sorted(filenames + links):
            path = here / name
            try:
                mode = path.lstat().st_mode
            except OSError:  # removed meanwhile
                mode = 0
            _hash_entry(h, root, path, mode)
    return h.hexdigest()


def _not_a_file(path: Path, mode: int) -> str:
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    return (f"{path} is {kind}: a local build is a file or a folder of files, folders and "
            f"links, none of which is read but a file")


def _hash_entry(h: Any, root: Path, path: Path, mode: int) -> None:
    """One entry of digest: its path, then what it holds, by its kind
    (lstat's mode: 0 when it could not be read)."""
    h.update((str(path.relative_to(root)) if path != root else "").encode() + b"\0")
    if stat.S_ISLNK(mode):
        h.update(b"link " + os.fsencode(os.readlink(path)))
    elif stat.S_ISREG(mode):
        try:
            # O_NONBLOCK: a file swapped for a FIFO since the lstat never blocks
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            h.update(b"?")
            return
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UsageError(_not_a_file(path, st.st_mode))
            h.update(f.read() if st.st_size <= HASHED_BYTES
                     else f"{st.st_size} {st.st_mtime_ns}".encode())
    elif mode == 0:
        h.update(b"?")
    else:
        raise UsageError(_not_a_file(path, mode))


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


def names_commit(source: Path, rev: str) -> bool:
    """Whether rev (a tag, say) names a commit of the checkout source."""
    try:
        commit_of(source, rev)
    except GitError:
        return False
    return True


def commits_between(source: Path, good: str, bad: str) -> list[str]:
    """git:COMMIT steps from good to bad (each git:REV) along the first
    parents (either may be the older), both ends included; GitError when
    they are not on one first-parent line."""
    old, new = good[len(GIT):], bad[len(GIT):]
    steps = first_parent_commits(source, old, new)
    if len(steps) == 1:  # bad is not after good: the other way round
        steps = first_parent_commits(source, new, old)[::-1]
    last = new if steps[0] == old else old
    if len(steps) < 2 or not steps[-1].startswith(last):
        raise GitError(f"{old} and {new} are not on one first-parent line of {source}")
    return [GIT + c[:SHORT] for c in steps]


def done_marker(where: Path) -> Path:
    """The file that says a commit's worktree is complete: written last,
    once `git worktree add` succeeded and the worktree's HEAD is the commit."""
    return where.with_name(f"{where.name}.complete")


def complete(where: Path, commit: str) -> bool:
    """Whether where holds a finished checkout of commit (its marker)."""
    try:
        return done_marker(where).read_text().strip() == commit and (where / ".git").is_file()
    except OSError:
        return False


def check_out(source: Path, commit: str, where: Path) -> None:
    """A worktree of source at commit in where (kept for the next build of
    it); GitError says why not. The caller holds the commit's lock
    (build_records.build_lock). A worktree without its marker (a checkout
    that was interrupted, or removed by hand) is discarded first, with what
    it left in source's git metadata, and made again."""
    if complete(where, commit):
        return
    discard(source, where)
    where.parent.mkdir(parents=True, exist_ok=True)
    # contained: a harness killed meanwhile takes git with it, so that no
    # checkout goes on writing into a folder the next run discards
    proc = run_contained(["git", "-C", str(source), "worktree", "add", "--detach", "--force",
                          str(where), commit], source)
    if proc.returncode != 0 or _git(where, "rev-parse", "HEAD") != commit:
        lines = proc.stderr.strip().splitlines()
        discard(source, where)
        raise GitError(f"git worktree add {commit[:SHORT]}: "
                       f"{lines[-1] if lines else f'exit {proc.returncode}'}")
    marker = done_marker(where)
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}")
    tmp.write_text(commit + "\n")
    tmp.replace(marker)


def discard(source: Path, where: Path) -> None:
    """Remove where, its marker and the worktree record source's git keeps
    for it (its folder in .git/worktrees, lock and index.lock included):
    what an interrupted `git worktree add` of the harness's left. Only the
    record whose gitdir points into where is touched, never another of the
    user's worktrees, nor the repository's own index.lock."""
    done_marker(where).unlink(missing_ok=True)
    shutil.rmtree(where, ignore_errors=True)
    common = _git(source, "rev-parse", "--git-common-dir")  # relative to source, or absolute
    records = source / common / "worktrees" if common else None
    if records is None or not records.is_dir():
        return
    ours = os.path.realpath(where / ".git")
    for record in records.iterdir():
        try:
            pointed = (record / "gitdir").read_text().strip()
        except OSError:
            continue
        if os.path.realpath(pointed) == ours:
            shutil.rmtree(record, ignore_errors=True)
