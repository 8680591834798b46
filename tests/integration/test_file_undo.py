"""File undo logs: a turn lost in a crash leaves the agent's files as they were."""

from __future__ import annotations

from pathlib import Path

from adapters.agent_files import AgentFiles
from adapters.file_undo import FileUndoLog


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "agents" / "Ash"
    home.mkdir(parents=True)
    (home / "journal.md").write_text("day one\n", encoding="utf-8")
    return home


def test_a_lost_turn_is_played_back_to_the_files_it_touched(tmp_path: Path) -> None:
    home = _home(tmp_path)
    files = AgentFiles(home)
    log = FileUndoLog(tmp_path / "undo")
    log.before_change("Ash", 7, files, "journal.md")
    files.append("journal.md", "day two\n")
    log.before_change("Ash", 7, files, "journal.md")  # second change: first content kept
    files.append("journal.md", "more\n")
    log.before_change("Ash", 7, files, "notes/new.md")
    files.write("notes/new.md", "made this turn")

    after_crash = FileUndoLog(tmp_path / "undo")  # a new process
    [(agent, tick, saved)] = after_crash.pending()
    assert (agent, tick) == ("Ash", 7)
    after_crash.play_back(agent, home, saved)
    assert (home / "journal.md").read_text(encoding="utf-8") == "day one\n"
    assert not (home / "notes" / "new.md").exists()
    assert after_crash.pending() == []


def test_a_committed_turn_drops_its_log(tmp_path: Path) -> None:
    home = _home(tmp_path)
    files = AgentFiles(home)
    log = FileUndoLog(tmp_path / "undo")
    log.before_change("Ash", 3, files, "journal.md")
    files.append("journal.md", "kept\n")
    log.committed("Ash", 2)  # another tick's commit does not count
    assert len(log.pending()) == 1
    log.committed("Ash", 3)
    assert log.pending() == []
    assert (home / "journal.md").read_text(encoding="utf-8") == "day one\nkept\n"


def test_paths_the_sandbox_refuses_are_not_logged(tmp_path: Path) -> None:
    home = _home(tmp_path)
    log = FileUndoLog(tmp_path / "undo")
    for bad in ("../escape.md", "/etc/passwd", 42, None):
        log.before_change("Ash", 1, AgentFiles(home), bad)
    assert log.pending() == []


def test_a_torn_log_is_discarded(tmp_path: Path) -> None:
    undo = tmp_path / "undo"
    undo.mkdir()
    (undo / "Ash.json").write_text('{"tick": 4, "fi', encoding="utf-8")
    assert FileUndoLog(undo).pending() == []
    assert not (undo / "Ash.json").exists()
