"""storage/seats_file.py: the seats' tokens (data/seats.json: made once, kept, 0600, never
through a link, refused in one line when damaged) and the watchers' note of each seat's
state (data/seats_now.json)."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from storage.errors import StorageError
from storage.seats_file import (
    STATES_FILE,
    TOKENS_FILE,
    SeatsFileError,
    read_states,
    seat_tokens,
    write_states,
)

TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def on_disk(data: Path) -> dict[str, str]:
    return json.loads((data / TOKENS_FILE).read_text(encoding="utf-8"))["seats"]


def test_tokens_are_made_once_and_kept(data: Path) -> None:
    tokens = seat_tokens(data, ["Ember", "Ash"])
    assert list(tokens) == ["Ember", "Ash"]
    assert all(TOKEN.fullmatch(token) for token in tokens.values())
    assert tokens["Ember"] != tokens["Ash"]
    assert on_disk(data) == tokens
    assert mode_of(data / TOKENS_FILE) == 0o600
    assert not (data / f"{TOKENS_FILE}.partial").exists()

    written = os.lstat(data / TOKENS_FILE)
    assert seat_tokens(data, ["Ember", "Ash"]) == tokens
    again = os.lstat(data / TOKENS_FILE)
    assert (again.st_ino, again.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)


def test_a_new_seat_gets_a_token_and_the_others_keep_theirs(data: Path) -> None:
    tokens = seat_tokens(data, ["Ember", "Ash"])
    more = seat_tokens(data, ["Ember", "Ash", "Birch"])
    assert {k: more[k] for k in ("Ember", "Ash")} == tokens
    assert TOKEN.fullmatch(more["Birch"]) and more["Birch"] not in tokens.values()
    assert on_disk(data) == more
    assert mode_of(data / TOKENS_FILE) == 0o600

    assert seat_tokens(data, ["Birch"]) == {"Birch": more["Birch"]}  # only those asked
    assert on_disk(data) == more  # a seat not served now keeps its token


def test_a_tokens_file_open_to_others_is_made_0600_again(data: Path) -> None:
    tokens = seat_tokens(data, ["Ember"])
    os.chmod(data / TOKENS_FILE, 0o644)
    assert seat_tokens(data, ["Ember"]) == tokens
    assert mode_of(data / TOKENS_FILE) == 0o600
    assert on_disk(data) == tokens


def test_a_link_at_the_tokens_file_is_refused_and_its_target_untouched(
        data: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    before = json.dumps({"seats": {"Ember": "k" * 43}}).encode()
    target.write_bytes(before)
    os.chmod(target, 0o644)
    os.symlink(target, data / TOKENS_FILE)
    with pytest.raises(SeatsFileError, match="symbolic link") as refused:
        seat_tokens(data, ["Ember", "Ash"])
    assert "\n" not in str(refused.value) and str(data / TOKENS_FILE) in str(refused.value)
    assert isinstance(refused.value, StorageError)
    assert (data / TOKENS_FILE).is_symlink() and os.readlink(data / TOKENS_FILE) == str(target)
    assert target.read_bytes() == before and mode_of(target) == 0o644


def test_a_dangling_link_is_refused_and_nothing_is_made_at_its_target(
        data: Path, tmp_path: Path) -> None:
    target = tmp_path / "nowhere.json"
    os.symlink(target, data / TOKENS_FILE)
    with pytest.raises(SeatsFileError, match="symbolic link"):
        seat_tokens(data, ["Ember"])
    assert not target.exists() and (data / TOKENS_FILE).is_symlink()


def test_a_hard_link_is_refused(data: Path, tmp_path: Path) -> None:
    seat_tokens(data, ["Ember"])
    other = tmp_path / "other-name.json"
    os.link(data / TOKENS_FILE, other)
    before = other.read_bytes()
    with pytest.raises(SeatsFileError, match="hard link"):
        seat_tokens(data, ["Ember", "Ash"])
    assert other.read_bytes() == before


def test_a_fifo_at_the_tokens_file_is_refused_without_blocking(data: Path) -> None:
    fifo = data / TOKENS_FILE
    os.mkfifo(fifo)
    said: list[BaseException | dict[str, str]] = []

    def call() -> None:
        try:
            said.append(seat_tokens(data, ["Ember"]))
        except BaseException as exc:  # reported to the test below
            said.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(2.0)
    if worker.is_alive():  # blocked on the FIFO: free the thread before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(2.0)
        pytest.fail("seat_tokens blocked on a FIFO at data/seats.json")
    (outcome,) = said
    assert isinstance(outcome, SeatsFileError) and "FIFO" in str(outcome)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("damaged", [
    b'{"seats": {"Ember": "',
    b"",
    b"not json at all",
    b'["seats"]',
    b"null",
    b'{"tokens": {}}',
    b'{"seats": ["Ember"]}',
    b'{"seats": {"Ember": "short"}}',
    b'{"seats": {"Ember": 12345678901234567890123456789012345}}',
    b'{"seats": {"Ember": "' + "\u00e9".encode("latin-1") * 40 + b'"}}',
], ids=["cut", "empty", "prose", "list", "null", "no-seats", "seats-list", "short-token",
        "number-token", "not-utf8"])
def test_a_damaged_tokens_file_is_refused_in_one_line_and_left_as_it_was(
        data: Path, damaged: bytes) -> None:
    path = data / TOKENS_FILE
    path.write_bytes(damaged)
    os.chmod(path, 0o644)
    with pytest.raises(SeatsFileError, match="is damaged") as refused:
        seat_tokens(data, ["Ember"])
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(path))
    assert path.read_bytes() == damaged and mode_of(path) == 0o644  # not even made 0600
    assert not (data / f"{TOKENS_FILE}.partial").exists()


def test_a_deeply_nested_tokens_file_is_refused_in_one_line(data: Path) -> None:
    path = data / TOKENS_FILE
    hostile = b'{"seats": ' + b"[" * 200_000
    path.write_bytes(hostile)
    with pytest.raises(SeatsFileError):
        seat_tokens(data, ["Ember"])
    assert path.read_bytes() == hostile


def test_the_states_note_round_trips_and_goes(data: Path) -> None:
    assert read_states(data) == {}  # no note: no writer serving
    states = {"Ember": "held", "Ash": "waiting", "Birch": "empty"}
    write_states(data, states)
    assert read_states(data) == states
    write_states(data, {"Ember": "empty"})
    assert read_states(data) == {"Ember": "empty"}
    write_states(data, None)
    assert not (data / STATES_FILE).exists() and read_states(data) == {}
    write_states(data, None)  # none there: nothing to do, no error
    assert not (data / STATES_FILE).exists()


def test_read_states_ignores_unknown_states(data: Path) -> None:
    (data / STATES_FILE).write_text(json.dumps(
        {"Ember": "held", "Ash": "asleep", "Birch": None, "Cedar": ["held"], "Dune": 3,
         "Elm": "waiting"}))
    assert read_states(data) == {"Ember": "held", "Elm": "waiting"}


@pytest.mark.parametrize("damaged", [
    b'{"Ember": "he', b"", b'["held"]', b'"held"', b"\xff\xfe", b"null",
], ids=["cut", "empty", "list", "string", "not-utf8", "null"])
def test_a_damaged_states_note_reads_as_none(data: Path, damaged: bytes) -> None:
    (data / STATES_FILE).write_bytes(damaged)
    assert read_states(data) == {}
    assert (data / STATES_FILE).read_bytes() == damaged


def test_a_deeply_nested_states_note_reads_as_none(data: Path) -> None:
    (data / STATES_FILE).write_bytes(b"[" * 200_000)
    assert read_states(data) == {}


def test_a_link_at_the_note_is_never_followed_nor_removed(data: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text('{"Ember": "held"}')
    os.symlink(target, data / STATES_FILE)
    assert read_states(data) == {}  # not read through the link
    write_states(data, None)  # not Hearth's file: left where it is
    assert (data / STATES_FILE).is_symlink() and target.read_text() == '{"Ember": "held"}'

    write_states(data, {"Ash": "waiting"})  # the link is moved aside, the note written
    assert not (data / STATES_FILE).is_symlink()
    assert read_states(data) == {"Ash": "waiting"}
    assert target.read_text() == '{"Ember": "held"}'


def test_a_fifo_at_the_note_is_left_alone(data: Path) -> None:
    os.mkfifo(data / STATES_FILE)
    assert read_states(data) == {}
    write_states(data, None)
    assert stat.S_ISFIFO(os.lstat(data / STATES_FILE).st_mode)
