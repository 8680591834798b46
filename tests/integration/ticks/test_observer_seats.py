"""Issue 44: the live observer serves a world's seats while it runs the world, and shows
each seat as waiting, held or empty (the observer opened as `hearth` opens it, its
HearthApp driven by Pilot; the seat played by the official MCP client)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from config import RuntimeEnv, load_config
from observe import watch_command
from observe.tui.app import HearthApp
from observe.tui.widgets.agents import AgentList
from tests.e2e.seat_client import NOT_YET, listening, seat_client, tick_of
from tests.e2e.test_seats_cli import _free_port
from tests.integration.ticks.test_observer_lets_go import _env, _hearth
from tests.integration.ticks.test_tui_app import _until

PROJECT = Path(__file__).resolve().parents[3]
AGENTS = """\
agents:
  - name: Ember
    model_id: claude-sonnet-5-5
    mind: seat
    personality: You like to look around.
  - name: Moss
    model_id: claude-haiku-5-5
    mind: offline
    personality: You keep to yourself.
"""


def test_the_observer_serves_its_seats_and_shows_who_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import subprocess

    port = _free_port()
    config = tmp_path / "config"
    config.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        text = source.read_text().replace("port: 8765", f"port: {port}")
        (config / source.name).write_text(text.replace("turn_seconds: 120", "turn_seconds: 10"))
    (config / "agents.yaml").write_text(AGENTS)
    data, agents = tmp_path / "data", tmp_path / "agents"
    made = subprocess.run(_hearth(data, agents, "--config-dir", str(config), "--init",
                                  "--seed", "5", "--size", "48x40"),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT, env=_env())
    assert made.returncode == 0, made.stderr
    url = f"http://127.0.0.1:{port}/mcp"
    seen: dict[str, object] = {}

    def ember_row(app: HearthApp) -> str:
        return next(v.activity for v in app.live.agents if v.name == "Ember")

    async def drive(api, data_dir: str, clock=None) -> int:
        app = HearthApp(api, clock)
        async with app.run_test(size=(160, 44)) as pilot:
            await pilot.press("space")  # run: the world (and its seats) is served
            await listening(url, 30)
            token = json.loads((data / "seats.json").read_text())["seats"]["Ember"]
            async with seat_client(url, token, "legacy") as client:
                ticks = []
                while len(ticks) < 2:
                    got = await client.call_tool("wait_for_turn", {})
                    if NOT_YET in got.content[0].text:
                        continue
                    ticks.append(tick_of([b.text for b in got.content]))
                    looked = await client.call_tool("examine", {})
                    assert not looked.is_error
                    await client.call_tool("end_turn", {})
                await _until(lambda: app.live.tick > ticks[-1], timeout=20)
                await pilot.pause()
                seen["held"] = ember_row(app)
                seen["list"] = app.query_one(AgentList).names
            await _until(lambda: "(empty seat)" in ember_row(app), timeout=30)
            seen["after"] = ember_row(app)
            seen["ticks"] = ticks
            await pilot.press("q")
            await pilot.pause()
        return 0

    monkeypatch.setattr("observe.tui.observe_world",
                        lambda api, data_dir, clock=None: asyncio.run(drive(api, data_dir, clock)))
    request = watch_command.Watch(RuntimeEnv(data, agents, None), load_config(config), None)
    assert watch_command.watch(request) == 0
    held, after = str(seen["held"]), str(seen["after"])
    assert held.startswith(("(held seat)", "(waiting seat)")) and "examine" in held, held
    assert after.startswith("(empty seat)"), after
    assert seen["list"] == ["Ember", "Moss"]
    assert not (data / "seats_now.json").exists()  # the note went with the engine
