"""`data/seats.json`: each seat's secret token, and `data/seats_now.json`: who holds it.

An agent with `mind: seat` is driven from outside over MCP (adapters/seats); the
client proves which seat it fills with that seat's token. Tokens are made once per
world, the first time a run serves the seat, and kept in `seats.json`, readable by its
owner alone (0600), written whole and never through a link, like every file Hearth
writes. A damaged or hostile one is refused in one line and left as it is: the tokens
people gave their clients stay theirs until they remove the file.

`seats_now.json` is a note for watchers (`--status`, an observer in another process):
each seat's state (empty, waiting, held) as the world's writer last saw it. The writer
takes it away when it stops; a missing or damaged note reads as no writer serving.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from storage.errors import StorageError
from storage.side_files import kind, read_bytes, write_whole

TOKENS_FILE = "seats.json"
STATES_FILE = "seats_now.json"
MOST_BYTES = 1 << 20
TOKEN_BYTES = 32
"""secrets.token_urlsafe(32): 256 random bits, 43 characters."""
STATES = ("empty", "waiting", "held")


class SeatsFileError(StorageError):
    """seats.json cannot be used as it is; the message says what to do, in one line."""


def seat_tokens(data_dir: Path, names: Iterable[str]) -> dict[str, str]:
    """Each named seat's token: those already made are kept; a seat new to the world
    gets one, and the file is written again (0600) only then or when its mode is wider."""
    path = Path(data_dir) / TOKENS_FILE
    tokens = _read_tokens(path)
    wanted = list(names)
    missing = [name for name in wanted if name not in tokens]
    for name in missing:
        tokens[name] = secrets.token_urlsafe(TOKEN_BYTES)
    if missing or _too_open(path):
        write_whole(path, (json.dumps({"seats": tokens}, indent=2, sort_keys=True) + "\n")
                    .encode(), mode=0o600)
    return {name: tokens[name] for name in wanted}


def _read_tokens(path: Path) -> dict[str, str]:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {}
    if (why := kind(info)) is not None:
        raise SeatsFileError(f"{path} is {why}, not a file of Hearth's; it was left as it "
                             "is. Remove it (new tokens are then made)")
    raw = read_bytes(path)
    try:
        if raw is None or len(raw) > MOST_BYTES:
            raise ValueError("unreadable or too large")
        seats = json.loads(raw.decode("utf-8"))["seats"]
        if not isinstance(seats, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and len(v) >= 32
                for k, v in seats.items()):
            raise ValueError("not a table of seat names and tokens")
        if len(set(seats.values())) != len(seats):
            raise ValueError("two seats share one token")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise SeatsFileError(f"{path} is damaged ({exc}); it was left as it is. Mend it, "
                             "or remove it (new tokens are then made)") from None
    return dict(seats)


def _too_open(path: Path) -> bool:
    try:
        return bool(stat.S_IMODE(os.lstat(path).st_mode) & 0o077)
    except FileNotFoundError:
        return True


def write_states(data_dir: Path, states: Mapping[str, str] | None) -> None:
    """Say each seat's state (None: no writer serves seats; the note goes). Failures are
    ignored: the note is a courtesy to watchers, never worth a run."""
    path = Path(data_dir) / STATES_FILE
    try:
        if states is None:
            if kind(os.lstat(path)) is None:
                os.unlink(path)
            return
        write_whole(path, json.dumps(dict(states), sort_keys=True).encode())
    except (OSError, ValueError, StorageError):
        return


def read_states(data_dir: Path) -> dict[str, str]:
    """Each seat's state as the world's writer last said it; {} when none serves."""
    raw = read_bytes(Path(data_dir) / STATES_FILE)
    if raw is None or len(raw) > MOST_BYTES:
        return {}
    try:
        said = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return {}
    if not isinstance(said, dict):
        return {}
    return {str(k): v for k, v in said.items() if v in STATES}
