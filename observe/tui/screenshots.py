"""Saving a screenshot (an SVG of the screen) without trusting what is on the disk.

The folder is made if it is missing; an existing one must be a real folder, not a
link to somewhere else, and the file is created new (`O_EXCL | O_NOFOLLOW`), relative
to the folder's own descriptor: a link planted under the name is never followed and
an older file is never overwritten (a second screenshot in the same second gets a
number).
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
               | getattr(os, "O_CLOEXEC", 0))


def save_svg(svg: str, folder: Path, name: str) -> Path:
    """Write `svg` as `folder`/`name` (or name-2.svg... if taken); the path written.
    Raises OSError (with a strerror to show) if the folder or file cannot be made."""
    if "/" in name or name in ("", ".", ".."):
        raise OSError(0, f"not a file name: {name!r}")
    try:
        folder.mkdir(mode=0o755, exist_ok=False)
    except FileExistsError:
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(0, f"{folder} is not a folder (a link or a file is there)") from None
    directory = os.open(folder, _DIR_FLAGS)
    try:
        stem, dot, suffix = name.rpartition(".")
        stem, suffix = (stem, dot + suffix) if dot else (name, "")
        for attempt in range(1, 100):
            candidate = name if attempt == 1 else f"{stem}-{attempt}{suffix}"
            try:
                fd = os.open(candidate, _FILE_FLAGS, 0o644, dir_fd=directory)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(svg)
            return folder / candidate
        raise OSError(0, f"too many screenshots named {name} already")
    finally:
        os.close(directory)


def screenshot_name(title: str, time_format: str | None = None) -> str:
    """"Hearth_2026-11-29T07_08_02_561641.svg": the title and the time, every character a
    file name may not hold (or that a shell would take apart) made "_"."""
    now = dt.datetime.now()
    stem = f"{title} {now.isoformat() if time_format is None else now.strftime(time_format)}"
    for reserved in ' <>:"/\\|?*.':
        stem = stem.replace(reserved, "_")
    return stem + ".svg"
