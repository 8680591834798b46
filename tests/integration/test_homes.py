"""Agents' home folders on a real file system in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.types import AgentName
from storage.homes import HOME_FILES, STATUS_FILE, AgentHomes

FILES = ("journal.md", "notes.md", "discoveries.md")


@pytest.fixture
def homes(tmp_path: Path) -> AgentHomes:
    return AgentHomes(tmp_path / "agents")


def test_home_files_are_the_three_files() -> None:
    assert set(HOME_FILES) == set(FILES)
    assert STATUS_FILE == ".status"


def test_create_makes_the_folder_files_and_status(homes: AgentHomes, tmp_path: Path) -> None:
    home = homes.create("Ember", "where: here")
    assert home == tmp_path / "agents" / "Ember"
    assert home.is_dir()
    assert sorted(p.name for p in home.iterdir()) == sorted([*FILES, STATUS_FILE])
    for name in FILES:
        assert (home / name).read_text(encoding="utf-8") == ""
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "where: here\n"


def test_create_accepts_an_agent_name_value(homes: AgentHomes) -> None:
    home = homes.create(AgentName("Sage"), "x")
    assert home.name == "Sage"
    assert (home / "notes.md").is_file()


def test_create_makes_missing_parent_folders(tmp_path: Path) -> None:
    homes = AgentHomes(tmp_path / "deep" / "er" / "agents")
    home = homes.create("River", "s")
    assert home.is_dir()
    assert (home / STATUS_FILE).is_file()


def test_create_never_overwrites_a_journal(homes: AgentHomes) -> None:
    home = homes.path("Ember")
    home.mkdir(parents=True)
    (home / "journal.md").write_text("Day one. I found a stone.\n", encoding="utf-8")
    homes.create("Ember", "first")
    assert (home / "journal.md").read_text(encoding="utf-8") == "Day one. I found a stone.\n"
    # The missing files are still made.
    assert (home / "notes.md").read_text(encoding="utf-8") == ""
    assert (home / "discoveries.md").read_text(encoding="utf-8") == ""


def test_create_again_keeps_what_the_agent_wrote_and_updates_status(homes: AgentHomes) -> None:
    home = homes.create("Ember", "first")
    (home / "journal.md").write_text("mine", encoding="utf-8")
    (home / "notes.md").write_text("also mine", encoding="utf-8")
    (home / "discoveries.md").write_text("bark twists into cord", encoding="utf-8")
    (home / "extra.txt").write_text("untouched", encoding="utf-8")

    again = homes.create("Ember", "second")

    assert again == home
    assert (home / "journal.md").read_text(encoding="utf-8") == "mine"
    assert (home / "notes.md").read_text(encoding="utf-8") == "also mine"
    assert (home / "discoveries.md").read_text(encoding="utf-8") == "bark twists into cord"
    assert (home / "extra.txt").read_text(encoding="utf-8") == "untouched"
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "second\n"


def test_homes_of_two_agents_are_separate(homes: AgentHomes) -> None:
    ember = homes.create("Ember", "ember status")
    sage = homes.create("Sage", "sage status")
    assert ember != sage
    (ember / "journal.md").write_text("ember's", encoding="utf-8")
    assert (sage / "journal.md").read_text(encoding="utf-8") == ""
    assert (sage / STATUS_FILE).read_text(encoding="utf-8") == "sage status\n"


def test_write_status_adds_a_trailing_newline(homes: AgentHomes) -> None:
    home = homes.create("Ember", "a")
    homes.write_status("Ember", "tick: 3\nposition: (1, 2)")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "tick: 3\nposition: (1, 2)\n"


def test_write_status_keeps_a_single_trailing_newline(homes: AgentHomes) -> None:
    home = homes.create("Ember", "a")
    homes.write_status("Ember", "tick: 4\n")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "tick: 4\n"


def test_write_status_of_empty_text_is_one_newline(homes: AgentHomes) -> None:
    home = homes.create("Ember", "a")
    homes.write_status("Ember", "")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "\n"


def test_write_status_rewrites_its_own_file_in_place_and_leaves_no_partial(
        homes: AgentHomes) -> None:
    """Hearth's own .status (a plain file with one name) is overwritten where it is:
    the same file, the new text whole, a longer old text cut to length."""
    home = homes.create("Ember", "an old status, longer than the new one")
    status = home / STATUS_FILE
    old_inode = status.stat().st_ino
    homes.write_status("Ember", "new status")
    assert status.read_text(encoding="utf-8") == "new status\n"
    assert status.stat().st_ino == old_inode
    homes.write_status("Ember", "a status longer than the one before it")
    assert status.read_text(encoding="utf-8") == "a status longer than the one before it\n"
    assert not (home / f"{STATUS_FILE}.partial").exists()
    assert sorted(p.name for p in home.iterdir()) == sorted([*FILES, STATUS_FILE])


def test_a_status_with_a_second_name_is_replaced_not_written_through(
        homes: AgentHomes, tmp_path: Path) -> None:
    """A hard link at .status (another name for a file elsewhere): writing in place
    would change that file too, so .status is replaced by a new file; the other
    name keeps its text."""
    home = homes.create("Ember", "old status")
    elsewhere = tmp_path / "elsewhere.txt"
    os.link(home / STATUS_FILE, elsewhere)
    homes.write_status("Ember", "new status")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "new status\n"
    assert elsewhere.read_text(encoding="utf-8") == "old status\n"
    assert (home / STATUS_FILE).stat().st_ino != elsewhere.stat().st_ino


def test_a_partial_left_by_a_crash_goes_at_the_next_status(homes: AgentHomes) -> None:
    home = homes.create("Ember", "old status")
    (home / f"{STATUS_FILE}.partial").write_text("half a stat", encoding="utf-8")
    homes.write_status("Ember", "new status")
    assert not (home / f"{STATUS_FILE}.partial").exists()
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "new status\n"


def test_write_status_many_times_leaves_the_last(homes: AgentHomes) -> None:
    home = homes.create("Ember", "start")
    for tick in range(20):
        homes.write_status("Ember", f"tick: {tick}")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "tick: 19\n"
    assert [p.name for p in home.iterdir() if p.name.endswith(".partial")] == []


def test_write_status_keeps_unicode(homes: AgentHomes) -> None:
    home = homes.create("Ember", "a")
    homes.write_status("Ember", "weather: 🌧️ — rain")
    assert (home / STATUS_FILE).read_text(encoding="utf-8") == "weather: 🌧️ — rain\n"


def test_path_is_the_root_plus_the_name(homes: AgentHomes, tmp_path: Path) -> None:
    assert homes.path("Ember") == tmp_path / "agents" / "Ember"
    assert homes.path("a_b-9") == tmp_path / "agents" / "a_b-9"
    assert not homes.path("Ember").exists()  # path() alone creates nothing


def test_root_accepts_a_string(tmp_path: Path) -> None:
    homes = AgentHomes(str(tmp_path / "agents"))  # type: ignore[arg-type]
    assert homes.root == tmp_path / "agents"
    assert homes.create("Ember", "s").is_dir()


@pytest.mark.parametrize(
    "bad",
    ["../x", "a/b", "", "..", ".", ".status", "/abs", "a\\b", "1abc", "_x", "a b", "x" * 33],
)
def test_path_rejects_invalid_names(homes: AgentHomes, bad: str) -> None:
    with pytest.raises(ValueError, match="invalid agent name"):
        homes.path(bad)


@pytest.mark.parametrize("bad", ["../x", "a/b", ""])
def test_invalid_names_write_nothing(homes: AgentHomes, tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        homes.create(bad, "status")
    with pytest.raises(ValueError):
        homes.write_status(bad, "status")
    with pytest.raises(ValueError):
        homes.exists(bad)
    assert list(tmp_path.iterdir()) == []


def test_exists(homes: AgentHomes) -> None:
    assert not homes.exists("Ember")
    homes.create("Ember", "s")
    assert homes.exists("Ember")
    assert not homes.exists("Sage")


def test_exists_is_false_for_a_plain_file(homes: AgentHomes) -> None:
    homes.root.mkdir(parents=True)
    (homes.root / "Ember").write_text("not a folder", encoding="utf-8")
    assert not homes.exists("Ember")
