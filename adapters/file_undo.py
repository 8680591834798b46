"""Undo logs for the agent's own files, so a turn lost in a crash leaves no trace there either.

The database rolls back a turn that was not committed; files in the agent's home
would not, and a turn taken again after a crash would append its journal entry a
second time. So before a turn first changes a file, the file's content is saved
to `data/undo/NAME.json` (written whole and fsynced). When the turn's commit lands
the log is deleted. At start-up a log whose turn is not in the database is played
back (each file set to what it held before the turn, or removed if it did not
exist) and deleted; a log whose turn did commit is simply deleted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from adapters.agent_files import AgentFiles
from storage.side_files import claim, claim_dir, kind, move_aside


class FileUndoLog:
    def __init__(self, directory: Path, world_id: str | None = None) -> None:
        self.directory = directory
        self.world_id = world_id
        """Logs name the world they belong to; another world's are never played back."""
        self._open: dict[str, dict[str, Any]] = {}
        """agent -> {"tick": t, "files": {path: content or None}} of the turn in progress."""

    def _path(self, agent: str) -> Path:
        return self.directory / f"{agent}.json"

    def before_change(self, agent: str, tick: int, files: AgentFiles, path: object) -> None:
        """Save `path`'s content before the turn's first change to it."""
        if not isinstance(path, str):
            return
        log = self._open.get(agent)
        if log is None or log["tick"] != tick:
            log = self._open[agent] = {"tick": tick, "world": self.world_id, "files": {}}
        if path in log["files"]:
            return
        found = files.read(path)
        if found.ok:
            before: str | None = found.content or ""
        elif found.missing:
            before = None
        else:
            return  # a path the sandbox refuses: the change will be refused too
        log["files"][path] = before
        self._write(agent, log)

    def _write(self, agent: str, log: dict[str, Any]) -> None:
        claim_dir(self.directory)  # a link there is moved aside, never written through
        final = self._path(agent)
        partial = final.with_suffix(".partial")
        data = json.dumps(log, ensure_ascii=False).encode("utf-8")
        claim(partial)  # a link or FIFO left there is moved aside, never followed
        partial.unlink(missing_ok=True)  # a torn log of ours
        fd = os.open(partial, _NEW_FILE_FLAGS, 0o644)  # never through a link, never waiting
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:  # a full disk: the change it guards is not made (main says
            os.close(fd)        # where in one line); the torn log goes, and its space
            partial.unlink(missing_ok=True)
            raise OSError(exc.errno, exc.strerror, str(partial)) from None
        os.close(fd)
        partial.replace(final)

    def guards_earlier_turn(self, agent: str, tick: int) -> bool:
        """The agent's log still guards a turn before `tick` (its commit has not
        landed), so a change in this turn would have to replace it."""
        log = self._open.get(agent)
        return log is not None and log["tick"] != tick

    def committed(self, agent: str, tick: int) -> None:
        """The agent's turn at `tick` is durable: its log is no longer needed."""
        log = self._open.get(agent)
        if log is not None and log["tick"] == tick:
            del self._open[agent]
            self._path(agent).unlink(missing_ok=True)

    def pending(self) -> list[tuple[str, int, dict[str, str | None]]]:
        """(agent, tick, files) of every log left behind by an earlier run."""
        if not os.path.lexists(self.directory):
            return []
        claim_dir(self.directory)  # a link there is moved aside: no log is read through it
        found = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                why = kind(os.lstat(path))
            except OSError:
                continue
            if why is not None:  # a link, hard link, FIFO or device: moved aside, never read
                move_aside(path, why)
                continue
            try:
                log = json.loads(_read_log(path))
                entry = (path.stem, int(log["tick"]), dict(log["files"]))
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # torn before the change it guards was made
                continue
            world = log.get("world")
            if self.world_id is not None and world is not None and world != self.world_id:
                aside = self.directory / "foreign"
                aside.mkdir(exist_ok=True)
                path.replace(aside / path.name)  # another world's: kept, never played
                continue
            found.append(entry)
        return found

    def play_back(self, agent: str, home: Path, files: dict[str, str | None]) -> None:
        """Put each file back as it was before the lost turn; then forget the log.

        Every path goes through the sandbox (`AgentFiles`): nothing outside the home
        is written or removed, no link is followed, and a home that is itself a link
        is not opened at all.
        """
        sandbox = AgentFiles(home)
        for path, content in files.items():
            if content is None:
                sandbox.remove(path)
            else:
                sandbox.write(path, content)
        self.forget(agent)

    def forget(self, agent: str) -> None:
        self._open.pop(agent, None)
        self._path(agent).unlink(missing_ok=True)


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
MAX_LOG_BYTES = 64 * 1024 * 1024


def _read_log(path: Path) -> str:
    """A log's text; ValueError unless it is a regular file (a link or FIFO is not
    followed or waited on, and is then discarded as a torn log would be)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if kind(info) is not None or info.st_size > MAX_LOG_BYTES:
            raise ValueError(f"{path} is not an undo log")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8")
    finally:
        os.close(fd)
