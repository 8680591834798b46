"""What the hostile tests share: a fingerprint of a folder, and a bounded wait."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder` (itself included): kind, size, mtime and content hash
    (a link's target for a link), never following a link."""
    seen: dict[str, tuple] = {}
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in [".", *dirs, *files]:
            path = Path(here) / name
            info = os.lstat(path)
            digest = ""
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                digest = os.readlink(path)
            key = os.path.relpath(path, folder)
            seen[key] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns, digest)
    return seen


def unblock(fifo: Path) -> None:
    """Open a FIFO both ways without waiting, so a writer or reader stuck on it goes on."""
    for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_RDWR | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, flags))


def within(seconds: float, make: Callable[[], Awaitable[Any]], fifos: Sequence[Path] = ()) -> Any:
    """Run `make()` on its own loop in a thread; fail (after freeing it) if it takes longer."""
    outcome: dict[str, Any] = {}

    def go() -> None:
        try:
            outcome["value"] = asyncio.run(make())  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            unblock(fifo)
        thread.join(10)
        pytest.fail(f"hung for more than {seconds}s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
