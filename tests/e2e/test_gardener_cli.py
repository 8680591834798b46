"""The Gardener end to end, through the command line as a person runs it: a world
where one agent is stranded far from the others gets a gentle intervention within two
cycles, applied by the engine, in the event log, `--status` and the observer; a
healthy world gets none."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import main
from adapters.gardener_command import GARDENER_NICENESS
from config import CONFIG_DIR, load_config
from core.types import Position
from engine import EngineRunner, HearthEngine
from main import PROJECT_DIR
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from observe.tui.widgets.feed import EventFeed
from services.simulation import load_simulation
from storage import Storage
from storage.history import HistoryReader
from tests.unit.observe.tui_kit import screen_text


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the rules decide
    return tmp_path / "data", tmp_path / "agents"


def hearth(capsys, dirs, *args: str) -> tuple[int, str, str]:
    data, agents = dirs
    code = main.main(["--data-dir", str(data), "--agents-dir", str(agents), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _quick_config(tmp_path: Path) -> Path:
    """The shipped config with the Gardener's 'alone' lines lowered, so a short run
    shows what a long one would."""
    folder = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    settings = folder / "settings.yaml"
    text = settings.read_text()
    text = text.replace("alone_ticks: [48, 120, 240]", "alone_ticks: [8, 16, 200]")
    assert "alone_ticks: [8, 16, 200]" in text
    settings.write_text(text)
    return folder


def _strand(data: Path, config_dir: Path) -> str:
    """Move one agent to the walkable cell farthest from the others; its name."""
    config = load_config(config_dir)

    async def place() -> tuple[str, Position]:
        async with Storage(data) as storage:
            sim = await load_simulation(storage, config)
            people = sorted(sim.agents.get_all_agents(), key=lambda a: a.name)
            loner, others = people[-1], people[:-1]
            world = sim.world
            best, far = None, -1
            for y in range(0, world.height, 3):
                for x in range(0, world.width, 3):
                    cell = Position(x, y)
                    if not world.is_passable(cell):
                        continue
                    near = min(max(abs(x - o.position.x), abs(y - o.position.y))
                               for o in others)
                    if near > far:
                        best, far = cell, near
            assert best is not None and far > 40
            return loner.name, best

    name, spot = asyncio.run(place())
    with sqlite3.connect(data / "world.db") as db:
        db.execute("UPDATE agents SET x = ?, y = ? WHERE name = ?", (spot.x, spot.y, name))
    return name


def _rows(data: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{data / 'world.db'}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


def test_a_stranded_agent_gets_a_gentle_intervention_within_two_cycles(
    capsys, dirs, tmp_path: Path
) -> None:
    config_dir = _quick_config(tmp_path)
    data = dirs[0]
    code, _, err = hearth(capsys, dirs, "--config-dir", str(config_dir), "--init",
                          "--size", "160x120", "--seed", "11", "--agents", "3")
    assert code == 0, err
    loner = _strand(data, config_dir)
    asked: list[tuple] = []
    for cycle in (1, 2):
        code, _, err = hearth(capsys, dirs, "--config-dir", str(config_dir), "--run", "12",
                              "--quiet")
        assert code == 0, err
        code, out, err = hearth(capsys, dirs, "--config-dir", str(config_dir), "--gardener",
                                "--once")
        assert code == 0, err
        assert f"cycle {cycle} at tick" in out
        asked = _rows(data, "SELECT id, cycle, kind, params FROM gardener_requests")
        if asked:
            break
    assert asked, "no intervention within two cycles"
    where = _rows(data, f"SELECT x, y FROM agents WHERE name = '{loner}'")[0]
    # Gentle, and for the stranded one first: a landmark near the others made to stand
    # out to it, a direction it may take, or not.
    kind, params = asked[0][2], json.loads(asked[0][3])
    assert kind == "reveal_landmark" and (params["x"], params["y"]) == where
    level, reasons = _rows(data, f"SELECT level, reasons FROM gardener_cycles "
                                 f"WHERE id = {asked[0][1]}")[0]
    assert level in ("WARNING", "CRITICAL")
    assert any(r["agent"] == loner and r["measure"] == "alone" for r in json.loads(reasons))
    before = _rows(data, f"SELECT x, y FROM agents WHERE name = '{loner}'")

    # The engine applies it at its next tick: the event log has it...
    code, out, err = hearth(capsys, dirs, "--config-dir", str(config_dir), "--run", "1")
    assert code == 0, err
    assert "gardener:" in out and params["landmark"] in out
    assert {s for (s,) in _rows(data, "SELECT status FROM gardener_requests")} == {"applied"}
    events = _rows(data, "SELECT kind, data FROM events WHERE kind LIKE 'gardener%'")
    assert {k for k, _ in events} == {"gardener_intervention"}
    assert len(events) == len(asked)
    logged = [json.loads(line) for line in (data / "events.jsonl").read_text().splitlines()]
    assert [e for e in logged if e.get("category") == "gardener"]
    # ...the agent was moved by nobody but itself (one tick: at most one walk)...
    after = _rows(data, f"SELECT x, y FROM agents WHERE name = '{loner}'")
    assert max(abs(after[0][0] - before[0][0]), abs(after[0][1] - before[0][1])) <= 8
    # ...--status lists it...
    code, out, _ = hearth(capsys, dirs, "--status")
    assert "the Gardener's latest requests" in out and "reveal_landmark" in out
    assert "applied" in out
    # ...and the observer's event feed shows it.
    asyncio.run(_feed_shows_the_gardener(data, config_dir, params["landmark"]))


async def _feed_shows_the_gardener(data: Path, config_dir: Path, landmark: str) -> None:
    config = load_config(config_dir)

    async def make() -> HearthEngine:
        from adapters.offline_mind import OfflineMind

        engine = await HearthEngine.open(
            Storage(data, create=False), config, mind=OfflineMind(1, {}))
        return engine

    api = ObserverAPI(EngineRunner(make), history=HistoryReader(data / "world.db"))
    await asyncio.to_thread(api.start)
    try:
        app = HearthApp(api)
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            feed = app.query_one(EventFeed)
            lines = [line for line in feed.shown if line.kind == "gardener_intervention"]
            assert lines and landmark in lines[0].text
            assert "The Gardener:" in screen_text(app)
            await pilot.press("q")
    finally:
        api.stop(10)
        api.history.close()


def test_a_healthy_world_gets_no_intervention(capsys, dirs) -> None:
    code, _, err = hearth(capsys, dirs, "--init", "--size", "64x48", "--seed", "3")
    assert code == 0, err
    for _ in range(2):
        assert hearth(capsys, dirs, "--run", "24", "--quiet")[0] == 0
        code, out, err = hearth(capsys, dirs, "--gardener", "--once")
        assert code == 0, err
        assert "asked for nothing" in out
    data = dirs[0]
    levels = [level for (level,) in _rows(data, "SELECT level FROM gardener_cycles")]
    assert len(levels) == 2 and set(levels) <= {"HEALTHY", "WATCH"}
    assert _rows(data, "SELECT count(*) FROM gardener_requests") == [(0,)]
    assert _rows(data, "SELECT count(*) FROM events WHERE kind LIKE 'gardener%'") == [(0,)]


def test_the_gardener_says_clearly_what_is_wrong(capsys, dirs, tmp_path: Path) -> None:
    code, _, err = hearth(capsys, dirs, "--gardener", "--once")
    assert code == 1 and "no world database here" in err
    assert not dirs[0].exists()  # it never creates one
    with pytest.raises(SystemExit) as stopped:  # argparse's way out for a usage mistake
        hearth(capsys, dirs, "--once")
    assert stopped.value.code == 2
    assert "--once goes with --gardener" in capsys.readouterr().err
    dirs[0].mkdir(parents=True)
    (dirs[0] / "world.db").write_text("not a database")
    code, _, err = hearth(capsys, dirs, "--gardener", "--once")
    assert code == 1 and "not" in err and "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here")
def test_a_lasting_gardener_steps_back_for_the_engine(capsys, dirs) -> None:
    """`hearth --gardener` beside a running world lowers its own priority, so on a
    busy machine the engine's ticks get the processors first; Ctrl+C stops it."""
    data, agents = dirs
    code, _, err = hearth(capsys, dirs, "--init", "--size", "40x30", "--seed", "4")
    assert code == 0, err
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "main", "--data-dir", str(data), "--agents-dir", str(agents),
         "--gardener"], cwd=PROJECT_DIR, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        said = [proc.stdout.readline() for _ in range(2)]  # tending ..., cycle ...
        assert said[1].startswith("cycle "), said
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, ours + GARDENER_NICENESS)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert "Gardener: stopped" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
