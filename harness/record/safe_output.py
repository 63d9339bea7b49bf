"""A file named by the user (`export --out FILE`) written without replacing
anything that is not a file of theirs to replace: OUT is a new file or a
regular one, never a device, a FIFO, a folder, nor a file of the run being
read; it is written beside itself and renamed into place, so a reader never
sees half of it and a failed write leaves the earlier one. A writer killed
meanwhile leaves its temporary file, which the next write into that folder
removes (named for its pid, as a run's caches are)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable

from .. import UsageError
from ..processes.launcher import alive

SUFFIX = ".writing"


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")


def target(out: Path, read: Path, option: str = "--out") -> Path:
    """Where OUT's bytes go (OUT, or the file a link of it names), once
    checked; a UsageError in one line otherwise. Nothing is opened: a FIFO
    or a device is known by its mode."""
    if not out.name or out.name in (".", ".."):
        raise UsageError(f"{option} {out}: not a file name")
    try:
        mode: int | None = os.stat(out).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # ELOOP, ENOTDIR, EACCES
        raise UsageError(f"{option} {out}: {os.strerror(exc.errno) if exc.errno else exc}"
                         + (" (a symlink loop)" if exc.errno == errno.ELOOP else "")) from None
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"{option} {out} is {_kind(mode)}: name a new file or a regular one, "
                         f"which is replaced")
    real = Path(os.path.realpath(out))
    if not real.parent.is_dir():
        raise UsageError(f"{option} {out}: {real.parent} is not a folder")
    run = Path(os.path.realpath(read))
    if real == run or run in real.parents:
        raise UsageError(f"{option} {out} is inside the run being read ({read}): its files are "
                         f"never replaced; name a file elsewhere")
    return real


def write_text(out: Path, text: str, read: Path, option: str = "--out") -> None:
    """OUT checked (target), then written whole: a temporary file beside it,
    fsynced, renamed onto it. An OSError (a full disk) is a UsageError
    naming OUT, and the temporary file is removed."""
    whole(target(out, read, option), text, shown=out)


def whole(real: Path, text: str, shown: Path | None = None) -> None:
    """real written whole or not at all (see write_text); a failure is a
    UsageError naming `shown` (default: real)."""
    sweep(real.parent)
    out = shown or real
    tmp = real.with_name(f".{real.name}.{os.getpid()}{SUFFIX}")
    try:
        with tmp.open("x") as f:  # "x": never through a file or link already there
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(real)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sweep(folder: Path) -> None:
    """Remove what a killed writer left in folder: `.NAME.PID.writing`
    files of this user whose process is gone."""
    try:
        found = list(folder.glob(f".*{SUFFIX}"))
    except OSError:
        return
    for path in found:
        pid = path.name[:-len(SUFFIX)].rpartition(".")[2]
        try:
            ours = path.lstat().st_uid == os.getuid()
        except OSError:
            continue
        if ours and pid.isdigit() and not alive(int(pid)):
            path.unlink(missing_ok=True)


# A folder being written (component): the writer's pid, then the name.
FOLDER_STAGING = ".writing-"


def component(text: str, what: str) -> str:
    """A file or folder name built from run data: one clean path component
    (no '/', NUL or other control character, not '.' or '..', at most 255
    bytes), else a UsageError naming what it came from."""
    if not text or text in (".", "..") or "/" in text or not text.isprintable() \
            or len(text.encode()) > 255:
        raise UsageError(f"{what} {text!r} is not a name a file can have: the run is refused")
    return text


def replace_folder(folder: Path, fill: Callable[[Path], None]) -> None:
    """folder written whole by fill(staged) beside itself, then put in the
    place of the earlier one; on any error (a full disk) the earlier one is
    left as it was and nothing of the new one stays: an OSError becomes a
    UsageError naming the folder."""
    parent = folder.parent
    _sweep_folders(parent)
    staged = old = None
    try:
        staged = Path(tempfile.mkdtemp(prefix=f"{FOLDER_STAGING}{os.getpid()}-", dir=parent))
        fill(staged)
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f"{FOLDER_STAGING}{os.getpid()}-", dir=parent))
            folder.replace(old / folder.name)
        staged.replace(folder)
        staged = None
    except OSError as exc:
        if old is not None and not folder.exists():
            (old / folder.name).replace(folder)
        raise UsageError(f"cannot write {folder}: {exc.strerror or exc}") from None
    finally:
        for tmp in (staged, old):
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)


def _sweep_folders(parent: Path) -> None:
    """What a killed replace_folder left in parent: its staging folders,
    of this user, whose process is gone."""
    for tmp in parent.glob(f"{FOLDER_STAGING}*") if parent.is_dir() else ():
        pid = tmp.name[len(FOLDER_STAGING):].partition("-")[0]
        try:
            ours = tmp.lstat().st_uid == os.getuid() and tmp.is_dir() and not tmp.is_symlink()
        except OSError:
            continue
        if ours and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)
