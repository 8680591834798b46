"""Nothing leaves a home (issue 26, build item 1): Hearth's own file work stays below it.

Every case plants something hostile in or at an agent's home (a symbolic link, a hard
link, a FIFO, a file where the folder should be), then runs Hearth: the real engine
on a real world, or the real CLI in a subprocess. Each checks that nothing outside the
home changed (listing, size, mtime and SHA-256 of a folder beside it), that nothing
hung (every run has a deadline; a FIFO is unblocked if it is missed), that no
traceback was logged, and that a refused home is one line to the operator.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.agent_files import AgentFiles
from adapters.file_undo import FileUndoLog
from config import HearthConfig, load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import ToolCall, ToolOutcome, TurnStart
from services.world_setup import create_world
from storage import Storage
from storage.homes import STATUS_FILE, AgentHomes, HomeRefusedError
from tests.integration.hostile import snapshot, unblock, within

pytestmark = pytest.mark.hostile

PROJECT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0


# -- what must not change ---------------------------------------------------------




@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the homes, with files an attacker would like Hearth to touch."""
    folder = tmp_path / "outside"
    (folder / "notes").mkdir(parents=True)
    (folder / "hosts").write_text("127.0.0.1 localhost\n", encoding="utf-8")
    (folder / "journal.md").write_text("not the agent's\n", encoding="utf-8")
    (folder / "notes" / "new.md").write_text("precious\n", encoding="utf-8")
    (folder / STATUS_FILE).write_text("someone else's status\n", encoding="utf-8")
    return folder


# -- a bounded wait, and a way out of a FIFO ---------------------------------------------






# -- a real world and a scripted mind ----------------------------------------------------


class Turn:
    def __init__(self, mind: FileMind, start: TurnStart) -> None:
        self.mind, self.start, self.asked = mind, start, 0

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self.mind.heard += [str(o) for o in outcomes]
        self.asked += 1
        if self.asked > 1:
            return []
        return [ToolCall(f"c{i}", name, args)
                for i, (name, args) in enumerate(self.mind.script(self.start.agent))]

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        self.mind.heard += [str(o) for o in outcomes]

    def record(self) -> Mapping[str, Any]:
        return {}


class FileMind:
    """Calls the given file tools once a turn (reads text, so .status is written)."""

    kind = "scripted"
    reads_text = True

    def __init__(self, script: Callable[[str], list[tuple[str, dict]]] | None = None) -> None:
        self.script = script or (lambda agent: [])
        self.turns: dict[str, int] = {}
        self.heard: list[str] = []

    def begin(self, start: TurnStart) -> Turn:
        self.turns[start.agent] = self.turns.get(start.agent, 0) + 1
        return Turn(self, start)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        pass


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


@pytest.fixture
def world(tmp_path: Path, config: HearthConfig) -> tuple[Path, Path, list[str]]:
    """(data folder, agents folder, agent names) of a small world with its homes made."""
    data, agents = tmp_path / "data", tmp_path / "agents"

    async def make() -> list[str]:
        async with Storage(data) as storage:
            made = await create_world(storage, config, homes=AgentHomes(agents), seed=4242,
                                      size=(64, 48), agent_count=3)
        return [str(a.name) for a in made.agents]

    return data, agents, within(DEADLINE, make)


def run_engine(world: tuple[Path, Path, list[str]], config: HearthConfig, mind: FileMind, *,
               ticks: int = 1, before: Callable[[HearthEngine], None] | None = None,
               fifos: Sequence[Path] = ()) -> HearthEngine:
    data, agents, _ = world

    async def go() -> HearthEngine:
        storage = Storage(data)
        engine = HearthEngine(storage, config, mind=mind, agents_dir=agents)
        try:
            await engine.initialize()
            if before is not None:
                before(engine)
            for _ in range(ticks):
                await engine.tick_once()
                if engine.stop_requested:
                    break
        finally:
            await engine.close()
            await storage.close()
        return engine

    return within(DEADLINE, go, fifos)


@pytest.fixture
def no_tracebacks(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO)
    yield caplog
    traced = [r for r in caplog.records if r.exc_info]
    assert traced == [], [r.getMessage() for r in traced]


def replace_with_link(home: Path, target: Path) -> None:
    import shutil

    shutil.rmtree(home)
    home.symlink_to(target, target_is_directory=True)


# -- a home that is a link or no folder ---------------------------------------------------


def test_a_home_that_is_a_link_stops_start_up_with_one_line(world, config, outside,
                                                            no_tracebacks) -> None:
    _, agents, names = world
    replace_with_link(agents / names[0], outside)
    before = snapshot(outside)
    mind = FileMind(lambda a: [("write_file", {"path": "notes.md", "text": "x"})])
    with pytest.raises(HomeRefusedError) as refused:
        run_engine(world, config, mind)
    line = str(refused.value)
    assert "\n" not in line and names[0] in line and "symbolic link" in line
    assert snapshot(outside) == before
    assert mind.turns == {}


def test_a_dangling_link_home_makes_nothing_where_it_points(world, config, tmp_path,
                                                            no_tracebacks) -> None:
    _, agents, names = world
    nowhere = tmp_path / "nowhere"
    replace_with_link(agents / names[1], nowhere)
    with pytest.raises(HomeRefusedError, match="symbolic link"):
        run_engine(world, config, FileMind())
    assert not os.path.lexists(nowhere)


def test_a_home_that_is_a_file_is_refused_and_left_alone(world, config, no_tracebacks) -> None:
    import shutil

    _, agents, names = world
    home = agents / names[0]
    shutil.rmtree(home)
    home.write_text("my own file\n", encoding="utf-8")
    with pytest.raises(HomeRefusedError, match="is a file") as refused:
        run_engine(world, config, FileMind())
    assert "\n" not in str(refused.value)
    assert home.read_text(encoding="utf-8") == "my own file\n"


def test_a_home_that_is_a_fifo_is_refused_without_waiting(world, config, no_tracebacks) -> None:
    import shutil

    _, agents, names = world
    home = agents / names[2]
    shutil.rmtree(home)
    os.mkfifo(home)
    with pytest.raises(HomeRefusedError, match="FIFO"):
        run_engine(world, config, FileMind(), fifos=[home])
    assert stat.S_ISFIFO(os.lstat(home).st_mode)


def test_a_home_swapped_for_a_link_mid_run_stops_the_run(world, config, outside,
                                                         no_tracebacks) -> None:
    _, agents, names = world
    before = snapshot(outside)
    mind = FileMind(lambda a: [("append_file", {"path": "journal.md", "text": "day\n"}),
                               ("write_file", {"path": "notes/new.md", "text": "mine"})])
    engine = run_engine(world, config, mind, ticks=3,
                        before=lambda e: replace_with_link(agents / names[0], outside))
    assert engine.halted is not None and "\n" not in engine.halted
    assert names[0] in engine.halted and "symbolic link" in engine.halted
    assert snapshot(outside) == before


def test_the_file_tools_refuse_a_home_that_became_a_link(world, outside) -> None:
    _, agents, names = world
    replace_with_link(agents / names[0], outside)
    before = snapshot(outside)
    files = AgentFiles(agents / names[0])
    for result in (files.write("hosts", "pwned"), files.append("journal.md", "x"),
                   files.edit("hosts", "localhost", "evil"), files.remove("hosts"),
                   files.read("hosts"), files.list(".")):
        assert not result.ok
    assert snapshot(outside) == before


def test_creating_homes_refuses_a_link_and_writes_nothing(tmp_path, outside) -> None:
    homes = AgentHomes(tmp_path / "agents")
    homes.root.mkdir()
    (homes.root / "Ember").symlink_to(outside)
    before = snapshot(outside)
    for write in (lambda: homes.create("Ember", "s"), lambda: homes.write_status("Ember", "s"),
                  lambda: homes.check("Ember")):
        with pytest.raises(HomeRefusedError, match="Ember"):
            write()
    assert snapshot(outside) == before
    homes.check("Sage")  # missing: fine, it will be made


# -- links, hard links and FIFOs inside a home ------------------------------------------


@pytest.mark.parametrize("name", [STATUS_FILE, f"{STATUS_FILE}.partial"])
@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_status_links_are_replaced_not_written_through(world, config, outside, name, link,
                                                       no_tracebacks) -> None:
    _, agents, names = world
    home = agents / names[0]
    (home / name).unlink(missing_ok=True)
    if link == "symbolic":
        (home / name).symlink_to(outside / STATUS_FILE)
    else:
        os.link(outside / STATUS_FILE, home / name)
    before = snapshot(outside)
    mind = FileMind()
    run_engine(world, config, mind, ticks=2)
    assert mind.turns.get(names[0], 0) >= 1  # its status was written, through no link
    assert snapshot(outside) == before
    status = os.lstat(home / STATUS_FILE)
    assert stat.S_ISREG(status.st_mode) and status.st_nlink == 1
    assert (outside / STATUS_FILE).read_text(encoding="utf-8") == "someone else's status\n"


@pytest.mark.parametrize("name", [f"{STATUS_FILE}.partial", "journal.md", "notes.md"])
def test_a_fifo_in_a_home_never_hangs_a_run(world, config, name, no_tracebacks) -> None:
    _, agents, names = world
    home = agents / names[0]
    (home / name).unlink(missing_ok=True)
    os.mkfifo(home / name)
    mind = FileMind(lambda a: [("read_file", {"path": "journal.md"}),
                               ("append_file", {"path": "journal.md", "text": "x"})])
    run_engine(world, config, mind, ticks=2, fifos=[home / name])
    assert mind.turns.get(names[0], 0) >= 1
    if name != f"{STATUS_FILE}.partial":  # the agent's: left alone
        assert stat.S_ISFIFO(os.lstat(home / name).st_mode)


def test_home_files_that_are_links_are_left_alone(world, config, outside, tmp_path,
                                                  no_tracebacks) -> None:
    _, agents, names = world
    home = agents / names[0]
    (home / "journal.md").unlink()
    (home / "journal.md").symlink_to(outside / "journal.md")
    (home / "notes.md").unlink()
    (home / "notes.md").symlink_to(outside / "made-by-hearth.md")  # dangling
    (home / "discoveries.md").unlink()
    os.link(outside / "hosts", home / "discoveries.md")
    before = snapshot(outside)
    mind = FileMind(lambda a: [("append_file", {"path": "journal.md", "text": "x"}),
                               ("append_file", {"path": "discoveries.md", "text": "x"}),
                               ("edit_file", {"path": "discoveries.md", "old": "127",
                                              "new": "666"})])
    run_engine(world, config, mind, ticks=2)
    assert snapshot(outside) == before
    assert not os.path.lexists(outside / "made-by-hearth.md")
    assert os.path.islink(home / "journal.md") and os.path.islink(home / "notes.md")


# -- undo logs and their replay ---------------------------------------------------------


def _lost_turn(undo: Path, home: Path) -> dict[str, str | None]:
    """What a turn killed mid-way leaves: it made notes/new.md and changed journal.md."""
    files = AgentFiles(home)
    log = FileUndoLog(undo)
    log.before_change(home.name, 9, files, "notes/new.md")
    assert files.write("notes/new.md", "made in the lost turn").ok
    log.before_change(home.name, 9, files, "journal.md")
    assert files.write("journal.md", "lost\n").ok
    [(_, _, saved)] = FileUndoLog(undo).pending()
    return saved


def test_replay_into_a_home_that_became_a_link_touches_nothing(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    import shutil

    shutil.rmtree(home)
    home.symlink_to(outside)
    before = snapshot(outside)
    FileUndoLog(tmp_path / "undo").play_back("Ember", home, saved)
    assert snapshot(outside) == before
    assert (outside / "notes" / "new.md").read_text(encoding="utf-8") == "precious\n"


def test_replay_through_a_linked_folder_removes_nothing_outside(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    import shutil

    shutil.rmtree(home / "notes")
    (home / "notes").symlink_to(outside / "notes")
    (home / "journal.md").unlink()
    (home / "journal.md").symlink_to(outside / "journal.md")
    before = snapshot(outside)
    FileUndoLog(tmp_path / "undo").play_back("Ember", home, saved)
    assert snapshot(outside) == before
    assert os.path.islink(home / "notes")
    assert os.path.islink(home / "journal.md")  # not a file the turn made: left alone


def test_replay_removes_a_hard_link_name_only(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    (home / "notes" / "new.md").unlink()
    os.link(outside / "notes" / "new.md", home / "notes" / "new.md")
    before = snapshot(outside)
    FileUndoLog(tmp_path / "undo").play_back("Ember", home, saved)
    after = snapshot(outside)
    assert not os.path.lexists(home / "notes" / "new.md")
    assert (outside / "notes" / "new.md").read_text(encoding="utf-8") == "precious\n"
    # Only the link count of the outside file drops (ctime, not content or mtime).
    assert {k: v[:1] + v[2:] for k, v in after.items()} == \
        {k: v[:1] + v[2:] for k, v in before.items()}


def test_undo_logs_that_are_links_or_fifos_are_dropped_not_followed(tmp_path, outside) -> None:
    undo = tmp_path / "undo"
    undo.mkdir()
    (undo / "Ember.json").symlink_to(outside / "hosts")
    os.mkfifo(undo / "Sage.json")
    (undo / "Ember.partial").symlink_to(outside / "journal.md")
    before = snapshot(outside)

    async def pending() -> list:
        return FileUndoLog(undo).pending()

    assert within(DEADLINE, pending, [undo / "Sage.json"]) == []
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    log = FileUndoLog(undo)
    log.before_change("Ember", 1, AgentFiles(home), "notes.md")  # writes Ember.partial
    assert snapshot(outside) == before
    assert [entry[0] for entry in FileUndoLog(undo).pending()] == ["Ember"]


def test_a_lost_turn_in_a_home_now_a_link_is_refused_at_start_up(world, config, outside,
                                                                 no_tracebacks) -> None:
    data, agents, names = world
    home = agents / names[0]
    _lost_turn(data / "undo", home)
    replace_with_link(home, outside)
    before = snapshot(outside)
    with pytest.raises(HomeRefusedError):
        run_engine(world, config, FileMind())
    assert snapshot(outside) == before
    assert (data / "undo" / f"{names[0]}.json").exists()  # kept for when the home is back


# -- through the CLI ----------------------------------------------------------------------


def hearth(where: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=PROJECT)


def _init(where: Path) -> list[str]:
    made = hearth(where, "--init", "--seed", "5", "--size", "48x40", "--agents", "3")
    assert made.returncode == 0, made.stderr
    return sorted(p.name for p in (where / "agents").iterdir())


def test_cli_run_with_a_linked_home_is_one_line_and_exit_1(tmp_path, outside) -> None:
    names = _init(tmp_path)
    replace_with_link(tmp_path / "agents" / names[0], outside)
    before = snapshot(outside)
    ran = hearth(tmp_path, "--run", "2")
    assert ran.returncode == 1, ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and names[0] in lines[0] and "symbolic link" in lines[0], lines
    assert snapshot(outside) == before


def test_cli_run_with_a_fifo_status_partial_does_not_hang(tmp_path) -> None:
    names = _init(tmp_path)
    fifo = tmp_path / "agents" / names[0] / f"{STATUS_FILE}.partial"
    os.mkfifo(fifo)
    try:
        ran = hearth(tmp_path, "--run", "2", "--quiet", timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        unblock(fifo)
        pytest.fail("--run hung on a FIFO at .status.partial")
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout


def test_cli_init_with_a_home_that_is_a_file_makes_nothing(tmp_path, outside) -> None:
    (tmp_path / "agents").mkdir()
    # The first agent of seed 5 is named by the world plan; block every likely name
    # by planning once in a scratch folder.
    names = _init(tmp_path / "scratch")
    (tmp_path / "agents" / names[0]).write_text("mine\n", encoding="utf-8")
    (tmp_path / "agents" / names[1]).symlink_to(outside)
    before = snapshot(outside)
    made = hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40", "--agents", "3")
    assert made.returncode == 1, made.stderr
    assert "Traceback" not in made.stderr + made.stdout
    lines = [line for line in made.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and names[0] in lines[0], lines
    assert not (tmp_path / "data" / "world.db").exists()
    assert (tmp_path / "agents" / names[0]).read_text(encoding="utf-8") == "mine\n"
    assert snapshot(outside) == before
