"""Nothing leaves a home (issue 26, build item 1): Hearth's own file work stays below it.

Every case plants something hostile in or at an agent's home (a symbolic link, a hard
link, a FIFO, a device node, a file where the folder should be), then runs Hearth: the
real engine on a real world, or the real CLI in a subprocess. Each ends with the checks
of tests/integration/hostile.py: nothing in the folder an escape would land in (the
links' target folder) changed (listing, size, mtime and SHA-256) and no device node was
written to or waited on, nothing hung (every run has a deadline; a FIFO is unblocked if
it is missed), no traceback was logged or printed, and world.db passes SQLite's
integrity check. A refused home is one line to the operator.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.agent_files import AgentFiles
from adapters.file_undo import FileUndoLog
from config import HearthConfig, load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_setup import create_world
from storage import Storage
from storage.homes import HOME_FILES, STATUS_FILE, STATUS_PARTIAL, AgentHomes, HomeRefusedError
from tests.integration.hostile import (
    DEADLINE,
    MAKES_A_DEVICE,
    OPENED_BY_OPEN,
    assert_never_written_or_waited_on,
    assert_unharmed,
    device_opens,
    hearth,
    make_device,
    no_tracebacks,  # noqa: F401 - a fixture, used by every case below
    one_line,
    snapshot,
    within,
)

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("no_tracebacks")]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the homes, with files an attacker would like Hearth to touch: every
    link a case plants points into it, so it is where an escape would land."""
    folder = tmp_path / "outside"
    (folder / "notes").mkdir(parents=True)
    (folder / "hosts").write_text("127.0.0.1 localhost\n", encoding="utf-8")
    (folder / "journal.md").write_text("not the agent's\n", encoding="utf-8")
    (folder / "notes" / "new.md").write_text("precious\n", encoding="utf-8")
    (folder / STATUS_FILE).write_text("someone else's status\n", encoding="utf-8")
    return folder


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


class FileMind(MindDefaults):
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
        engine = await HearthEngine.open(storage, config, mind=mind, agents_dir=agents)
        try:
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


def replace_with_link(home: Path, target: Path) -> None:
    shutil.rmtree(home)
    home.symlink_to(target, target_is_directory=True)


# -- a home that is a link or no folder ---------------------------------------------------


def test_a_home_that_is_a_link_stops_start_up_with_one_line(world, config, outside) -> None:
    data, agents, names = world
    replace_with_link(agents / names[0], outside)
    before = snapshot(outside)
    mind = FileMind(lambda a: [("write_file", {"path": "notes.md", "text": "x"})])
    with pytest.raises(HomeRefusedError) as refused:
        run_engine(world, config, mind)
    line = str(refused.value)
    assert "\n" not in line and names[0] in line and "symbolic link" in line
    assert mind.turns == {}
    assert_unharmed(before, outside, data / "world.db")


def test_a_dangling_link_home_makes_nothing_where_it_points(world, config, outside) -> None:
    data, agents, names = world
    nowhere = outside / "nowhere"
    replace_with_link(agents / names[1], nowhere)
    before = snapshot(outside)
    with pytest.raises(HomeRefusedError, match="symbolic link"):
        run_engine(world, config, FileMind())
    assert not os.path.lexists(nowhere)
    assert_unharmed(before, outside, data / "world.db")


def test_a_home_that_is_a_file_is_refused_and_left_alone(world, config, outside) -> None:
    data, agents, names = world
    home = agents / names[0]
    shutil.rmtree(home)
    home.write_text("my own file\n", encoding="utf-8")
    before = snapshot(outside)
    with pytest.raises(HomeRefusedError, match="is a regular file") as refused:
        run_engine(world, config, FileMind())
    assert "\n" not in str(refused.value)
    assert home.read_text(encoding="utf-8") == "my own file\n"
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("kind", ["FIFO", pytest.param("device", marks=MAKES_A_DEVICE)])
def test_a_home_that_is_a_fifo_or_device_is_refused_without_waiting(world, config, outside,
                                                                    kind) -> None:
    data, agents, names = world
    home = agents / names[2]
    shutil.rmtree(home)
    if kind == "FIFO":
        os.mkfifo(home)
    else:
        make_device(home)
    before = snapshot(outside)
    with device_opens(*([home] if kind == "device" else [])) as opened, \
            pytest.raises(HomeRefusedError, match=kind):
        run_engine(world, config, FileMind(), fifos=[home])
    assert opened == []
    assert (stat.S_ISFIFO if kind == "FIFO" else stat.S_ISCHR)(os.lstat(home).st_mode)
    assert_unharmed(before, outside, data / "world.db")


def test_a_home_swapped_for_a_link_mid_run_stops_the_run(world, config, outside) -> None:
    data, agents, names = world
    before = snapshot(outside)
    mind = FileMind(lambda a: [("append_file", {"path": "journal.md", "text": "day\n"}),
                               ("write_file", {"path": "notes/new.md", "text": "mine"})])
    engine = run_engine(world, config, mind, ticks=3,
                        before=lambda e: replace_with_link(agents / names[0], outside))
    assert engine.halted is not None and "\n" not in engine.halted
    assert names[0] in engine.halted and "symbolic link" in engine.halted
    assert_unharmed(before, outside, data / "world.db")


def test_the_file_tools_refuse_a_home_that_became_a_link(world, outside) -> None:
    data, agents, names = world
    replace_with_link(agents / names[0], outside)
    before = snapshot(outside)
    files = AgentFiles(agents / names[0])

    def use() -> list:
        return [files.write("hosts", "pwned"), files.append("journal.md", "x"),
                files.edit("hosts", "localhost", "evil"), files.remove("hosts"),
                files.read("hosts"), files.list(".")]

    for result in within(DEADLINE, use):
        assert not result.ok
    assert_unharmed(before, outside, data / "world.db")


def test_creating_homes_refuses_a_link_and_writes_nothing(tmp_path, outside) -> None:
    homes = AgentHomes(tmp_path / "agents")
    homes.root.mkdir()
    (homes.root / "Ember").symlink_to(outside)
    before = snapshot(outside)
    for write in (lambda: homes.create("Ember", "s"), lambda: homes.write_status("Ember", "s"),
                  lambda: homes.check("Ember")):
        with pytest.raises(HomeRefusedError, match="Ember"):
            within(DEADLINE, write)
    within(DEADLINE, lambda: homes.check("Sage"))  # missing: fine, it will be made
    assert_unharmed(before, outside)  # no world: homes alone


# -- links, hard links, FIFOs and devices inside a home ----------------------------------


@pytest.mark.parametrize("name", [STATUS_FILE, STATUS_PARTIAL])
@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_status_links_are_replaced_not_written_through(world, config, outside, name,
                                                       link) -> None:
    data, agents, names = world
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
    status = os.lstat(home / STATUS_FILE)
    assert stat.S_ISREG(status.st_mode) and status.st_nlink == 1
    assert (outside / STATUS_FILE).read_text(encoding="utf-8") == "someone else's status\n"
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("name", sorted(HOME_FILES))
def test_hard_links_at_the_files_a_home_is_made_with_are_never_written_through(
        world, config, outside, name) -> None:
    """journal.md, notes.md and discoveries.md are made by Hearth (only if missing) and
    changed by the agent's tools: a hard link to a file outside is never written."""
    data, agents, names = world
    home = agents / names[0]
    (home / name).unlink()
    os.link(outside / "journal.md", home / name)
    before = snapshot(outside)
    mind = FileMind(lambda a: [("append_file", {"path": name, "text": "x"}),
                               ("edit_file", {"path": name, "old": "not", "new": "now"}),
                               ("write_file", {"path": name, "text": "mine"})])
    run_engine(world, config, mind, ticks=2)
    AgentHomes(agents).create(names[0], "again")  # what --init does to a home that exists
    assert mind.turns.get(names[0], 0) >= 1
    assert (outside / "journal.md").read_text(encoding="utf-8") == "not the agent's\n"
    assert_unharmed(before, outside, data / "world.db")


@pytest.mark.parametrize("name", [STATUS_PARTIAL, "journal.md", "notes.md"])
def test_a_fifo_in_a_home_never_hangs_a_run(world, config, outside, name) -> None:
    data, agents, names = world
    home = agents / names[0]
    (home / name).unlink(missing_ok=True)
    os.mkfifo(home / name)
    before = snapshot(outside)
    mind = FileMind(lambda a: [("read_file", {"path": "journal.md"}),
                               ("append_file", {"path": "journal.md", "text": "x"})])
    run_engine(world, config, mind, ticks=2, fifos=[home / name])
    assert mind.turns.get(names[0], 0) >= 1
    if name != STATUS_PARTIAL:  # the agent's: left alone
        assert stat.S_ISFIFO(os.lstat(home / name).st_mode)
    assert_unharmed(before, outside, data / "world.db")


@MAKES_A_DEVICE
@pytest.mark.parametrize("name", [STATUS_FILE, STATUS_PARTIAL, "journal.md", "notes.md"])
def test_a_device_in_a_home_is_never_written_or_waited_on(world, config, outside,
                                                          name) -> None:
    """A device node (/dev/null's numbers) at a name Hearth writes: .status and its
    .partial are replaced by a fresh file (the node's name goes, the device is never
    opened); the agent's files are left alone and its tools refuse them."""
    data, agents, names = world
    home = agents / names[0]
    make_device(home / name)
    before = snapshot(outside)
    mind = FileMind(lambda a: [("read_file", {"path": name}),
                               ("append_file", {"path": name, "text": "x"}),
                               ("edit_file", {"path": name, "old": "a", "new": "b"}),
                               ("write_file", {"path": name, "text": "mine"})])
    with device_opens(home / name) as opened:
        run_engine(world, config, mind, ticks=2)
        AgentHomes(agents).create(names[0], "again")  # what --init does to a home that exists
    assert mind.turns.get(names[0], 0) >= 1
    assert_never_written_or_waited_on(opened)
    if name in (STATUS_FILE, STATUS_PARTIAL):  # Hearth's: a fresh file in its place
        assert stat.S_ISREG(os.lstat(home / STATUS_FILE).st_mode)
        assert not os.path.lexists(home / STATUS_PARTIAL)
    else:  # the agent's: left alone, every change refused
        assert stat.S_ISCHR(os.lstat(home / name).st_mode)
        assert any("device" in said for said in mind.heard), mind.heard
    assert_unharmed(before, outside, data / "world.db")


@MAKES_A_DEVICE
def test_the_device_watch_sees_a_write_through_any_name(tmp_path) -> None:
    """The instrument the device cases rely on: an open of the node is seen, under a new
    name too; /dev/null itself and a file that reuses the node's inode number are not."""
    node = tmp_path / "node"
    make_device(node)
    with device_opens(node) as opened:
        os.close(os.open(node, os.O_RDONLY | os.O_NONBLOCK))
        node.rename(tmp_path / "renamed")
        with open(tmp_path / "renamed", "wb") as handle:
            handle.write(b"x")
        os.close(os.open(os.devnull, os.O_WRONLY))
        (tmp_path / "renamed").unlink()
        (tmp_path / "reused").write_bytes(b"a regular file, maybe on the same inode")
    assert opened[0] & os.O_NONBLOCK and opened[1:] == [OPENED_BY_OPEN], opened
    with pytest.raises(AssertionError, match="open"):
        assert_never_written_or_waited_on(opened)


def test_home_files_that_are_links_are_left_alone(world, config, outside) -> None:
    data, agents, names = world
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
    assert not os.path.lexists(outside / "made-by-hearth.md")
    assert os.path.islink(home / "journal.md") and os.path.islink(home / "notes.md")
    assert_unharmed(before, outside, data / "world.db")


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


def _play_back(undo: Path, home: Path, saved: dict[str, str | None]) -> None:
    within(DEADLINE, lambda: FileUndoLog(undo).play_back(home.name, home, saved))


def test_replay_into_a_home_that_became_a_link_touches_nothing(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    shutil.rmtree(home)
    home.symlink_to(outside)
    before = snapshot(outside)
    _play_back(tmp_path / "undo", home, saved)
    assert (outside / "notes" / "new.md").read_text(encoding="utf-8") == "precious\n"
    assert_unharmed(before, outside)  # no world: an undo log alone


def test_replay_through_a_linked_folder_removes_nothing_outside(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    shutil.rmtree(home / "notes")
    (home / "notes").symlink_to(outside / "notes")
    (home / "journal.md").unlink()
    (home / "journal.md").symlink_to(outside / "journal.md")
    before = snapshot(outside)
    _play_back(tmp_path / "undo", home, saved)
    assert os.path.islink(home / "notes")
    assert os.path.islink(home / "journal.md")  # not a file the turn made: left alone
    assert_unharmed(before, outside)


def test_replay_removes_a_hard_link_name_only(tmp_path, outside) -> None:
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)
    saved = _lost_turn(tmp_path / "undo", home)
    (home / "notes" / "new.md").unlink()
    os.link(outside / "notes" / "new.md", home / "notes" / "new.md")
    before = snapshot(outside)
    _play_back(tmp_path / "undo", home, saved)
    assert not os.path.lexists(home / "notes" / "new.md")
    assert (outside / "notes" / "new.md").read_text(encoding="utf-8") == "precious\n"
    assert_unharmed(before, outside)  # only its link count dropped (not in a snapshot)


@MAKES_A_DEVICE
def test_undo_logs_that_are_links_fifos_or_devices_are_dropped_not_followed(
        tmp_path, outside) -> None:
    undo = tmp_path / "undo"
    undo.mkdir()
    (undo / "Ember.json").symlink_to(outside / "hosts")
    os.mkfifo(undo / "Sage.json")
    make_device(undo / "River.json")
    (undo / "Ember.partial").symlink_to(outside / "journal.md")
    make_device(undo / "River.partial")
    before = snapshot(outside)
    home = tmp_path / "agents" / "Ember"
    home.mkdir(parents=True)

    def use() -> list:
        found = FileUndoLog(undo).pending()
        log = FileUndoLog(undo)
        log.before_change("Ember", 1, AgentFiles(home), "notes.md")  # writes Ember.partial
        log.before_change("River", 1, AgentFiles(home), "notes.md")  # writes River.partial
        return found

    with device_opens(undo / "River.json", undo / "River.partial") as opened:
        assert within(DEADLINE, use, [undo / "Sage.json"]) == []
    assert_never_written_or_waited_on(opened)
    assert sorted(entry[0] for entry in FileUndoLog(undo).pending()) == ["Ember", "River"]
    assert_unharmed(before, outside)


def test_a_lost_turn_in_a_home_now_a_link_is_refused_at_start_up(world, config,
                                                                 outside) -> None:
    data, agents, names = world
    home = agents / names[0]
    _lost_turn(data / "undo", home)
    replace_with_link(home, outside)
    before = snapshot(outside)
    with pytest.raises(HomeRefusedError):
        run_engine(world, config, FileMind())
    assert (data / "undo" / f"{names[0]}.json").exists()  # kept for when the home is back
    assert_unharmed(before, outside, data / "world.db")


# -- through the CLI ----------------------------------------------------------------------


def _init(where: Path, agents: int = 3) -> list[str]:
    made = hearth(where, "--init", "--seed", "5", "--size", "48x40", "--agents", str(agents))
    assert made.returncode == 0, made.stderr
    return sorted(p.name for p in (where / "agents").iterdir())


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The agents of seed 5 with 3 agents, as the world plan names them (planned once in
    a scratch folder)."""
    return _init(tmp_path_factory.mktemp("scratch"))


def test_cli_run_with_a_linked_home_is_one_line_and_exit_1(tmp_path, outside) -> None:
    names = _init(tmp_path)
    replace_with_link(tmp_path / "agents" / names[0], outside)
    before = snapshot(outside)
    ran = hearth(tmp_path, "--run", "2")
    assert ran.returncode == 1, ran.stderr
    line = one_line(ran.stderr)
    assert names[0] in line and "symbolic link" in line, line
    assert_unharmed(before, outside, tmp_path / "data" / "world.db", ran.stdout + ran.stderr)


@pytest.mark.parametrize("name", [STATUS_PARTIAL,
                                  pytest.param(STATUS_FILE, marks=MAKES_A_DEVICE)])
def test_cli_run_with_a_fifo_or_device_at_the_status_does_not_hang(tmp_path, outside,
                                                                   name) -> None:
    names = _init(tmp_path)
    home = tmp_path / "agents" / names[0]
    fifo, device = home / STATUS_PARTIAL, home / name
    os.mkfifo(fifo)
    if name == STATUS_FILE:
        make_device(device)
    before = snapshot(outside)
    ran = hearth(tmp_path, "--run", "2", "--quiet", fifos=[fifo])
    assert ran.returncode == 0, ran.stderr
    assert stat.S_ISREG(os.lstat(home / STATUS_FILE).st_mode)
    assert_unharmed(before, outside, tmp_path / "data" / "world.db", ran.stdout + ran.stderr)


def test_cli_init_with_a_home_that_is_a_file_makes_nothing(tmp_path, outside, planned) -> None:
    (tmp_path / "agents").mkdir()
    names = planned
    (tmp_path / "agents" / names[0]).write_text("mine\n", encoding="utf-8")
    (tmp_path / "agents" / names[1]).symlink_to(outside)
    before = snapshot(outside)
    made = hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40", "--agents", "3")
    assert made.returncode == 1, made.stderr
    assert names[0] in one_line(made.stderr)
    assert not (tmp_path / "data" / "world.db").exists()
    assert (tmp_path / "agents" / names[0]).read_text(encoding="utf-8") == "mine\n"
    assert_unharmed(before, outside, output=made.stdout + made.stderr)  # no world made


def _world_files(data: Path) -> dict[str, tuple]:
    """A data folder's snapshot, but for when writer.lock was last written: taking the
    lock notes its holder there and clears it (storage/world_lock.py)."""
    return {name: seen[:2] + seen[3:] if name == "writer.lock" else seen
            for name, seen in snapshot(data).items()}


@pytest.mark.parametrize("kind", ["file", "FIFO", pytest.param("device", marks=MAKES_A_DEVICE),
                                  "link to a file", "dangling link"])
def test_cli_init_force_refuses_a_new_home_in_the_way_before_moving_anything(
        tmp_path, outside, planned, kind) -> None:
    """`--init --force` sets the old world aside with its homes (and any folder at a new
    agent's home); something else at a new agent's home would stay in the way, so it is
    refused in one line before anything is moved: the old world stays exactly in place."""
    old = _init(tmp_path, agents=2)
    [newcomer] = set(planned) - set(old)
    home = tmp_path / "agents" / newcomer
    if kind == "file":
        home.write_text("mine\n", encoding="utf-8")
    elif kind == "FIFO":
        os.mkfifo(home)
    elif kind == "device":
        make_device(home)
    elif kind == "link to a file":
        home.symlink_to(outside / "hosts")
    else:
        home.symlink_to(outside / "nowhere")
    data, agents = _world_files(tmp_path / "data"), snapshot(tmp_path / "agents")
    before = snapshot(outside)
    again = hearth(tmp_path, "--init", "--force", "--seed", "5", "--size", "48x40",
                   "--agents", "3", fifos=[home])
    assert again.returncode == 1, again.stdout + again.stderr
    line = one_line(again.stderr)
    assert newcomer in line and "nothing was written" in line, line
    assert _world_files(tmp_path / "data") == data  # no backup made, nothing moved
    assert snapshot(tmp_path / "agents") == agents
    assert_unharmed(before, outside, tmp_path / "data" / "world.db",
                    again.stdout + again.stderr)


def test_cli_init_force_takes_a_linked_folder_at_a_new_home_along_unfollowed(
        tmp_path, outside, planned) -> None:
    """A link to a folder at a new agent's home is set aside with the old world (the link
    moved, not followed) and a real folder made in its place."""
    old = _init(tmp_path, agents=2)
    [newcomer] = set(planned) - set(old)
    (tmp_path / "agents" / newcomer).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    again = hearth(tmp_path, "--init", "--force", "--seed", "5", "--size", "48x40",
                   "--agents", "3")
    assert again.returncode == 0, again.stderr
    [saved] = (tmp_path / "data" / "backups").glob("world.replaced.*")
    assert os.path.islink(saved / "agents" / newcomer)
    home = tmp_path / "agents" / newcomer
    assert home.is_dir() and not home.is_symlink()
    assert_unharmed(before, outside, tmp_path / "data" / "world.db",
                    again.stdout + again.stderr)
