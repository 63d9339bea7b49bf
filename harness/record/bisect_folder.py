"""A bisect's own folder in an OUT: its one run directory, the `latest`
link through which each step's run resumes it (so no other run in OUT can
redirect a step), and the lock held from the first step to the report;
made at the start (or found again for `bisect --resume`), removed whole when
the first step refuses."""

from __future__ import annotations

import shutil
from datetime import datetime
from itertools import count
from pathlib import Path

from .. import UsageError
from ..core.envinfo import host
from .rundir import RunDir, RunDirError, check_out, latest, new_env, open_run_dir, point_latest

FOLDER = "bisect-"


def start(out: Path) -> tuple[RunDir, RunDir, list[Path]]:
    """A new bisect folder in OUT (created atomically, a taken name gets a
    suffix), held, with its run directory; also the folders this made."""
    check_out(out)
    made = [p for p in (out, *out.parents) if not (p.exists() or p.is_symlink())]
    path = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for suffix in count(1):
            path = out / (f"{FOLDER}{stamp}" + (f"-{suffix}" if suffix > 1 else ""))
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        folder = RunDir(path)
        folder.lock()
        run = RunDir.create_new(path, lambda run_id: new_env(run_id, host()))
        point_latest(path, run)
    except OSError as exc:
        discard(path, made)
        raise UsageError(f"--out: cannot write {exc.filename or out}: {exc.strerror}") from None
    return folder, run, made


def discard(path: Path | None, made: list[Path]) -> None:
    """A new bisect's folder removed, and the folders made for it: a refusal
    leaves nothing written."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            pass


def resume(text: Path) -> tuple[RunDir, RunDir]:
    """An earlier bisect's run directory (--resume), held: refused when it
    is not one, or another bisect holds it."""
    run = open_run_dir(text)
    holder = latest(run.path.parent)
    if not run.path.parent.name.startswith(FOLDER) or holder is None or holder.path != run.path:
        raise UsageError(f"bisect --resume: {text} is not a bisect's run directory (the one its "
                         f"first line names, {FOLDER}.../RUN)")
    folder = RunDir(run.path.parent)
    folder.lock()
    return folder, run


def has_rows(run: RunDir) -> bool:
    try:
        return bool(run.runs().rows)
    except RunDirError:
        return True  # not ours to judge: kept
