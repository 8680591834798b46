"""Issue 44: seats that an outside agent fills over MCP, as a user runs them.

The real program (`hearth --run N`) serves its seats; the tests drive them with the
official MCP client (`mcp` SDK, streamable HTTP) in this process or in a process of
its own, beside a Claude agent on the strict stand-in and an offline agent. What the
tests hold the server to is the MCP specification's and the SDK's documented
behaviour:
- Authorization (modelcontextprotocol.io/specification, basic/authorization): "Invalid
  or expired tokens MUST receive a HTTP 401 response".
- Tools (server/tools): "Protocol Errors: unknown tools, invalid arguments ..." are
  JSON-RPC errors; errors of the tool's own doing are a result with `isError: true`.
- The SDK's session manager: a session "can only be used with the credential that
  created it", answered "exactly as if the session did not exist" (404).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from tests.e2e.processes import PROJECT, clean_env, hearth_args
from tests.e2e.seat_client import NOT_YET, listening, play, seat_client, tick_of
from tests.e2e.test_fork_claude_cli import _world as world
from tests.e2e.worlds import run
from tests.e2e.worlds import tick_of as world_tick
from tests.messages_standin import StrictMessagesApi

SEATS = ("Ember", "Sage")
TICKS = 20

AGENTS = """\
agents:
  - name: Ember
    model_id: claude-sonnet-5-5
    mind: seat
    personality: You like to walk and look around.
  - name: Sage
    model_id: claude-sonnet-5-5
    mind: seat
    personality: You are patient and observant.
  - name: River
    model_id: claude-haiku-5-5
    mind: {river}
    personality: You follow the water.
  - name: Moss
    model_id: claude-haiku-5-5
    mind: offline
    personality: You keep to yourself.
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _seated(where: Path, turn_seconds: float, river: str = "claude") -> str:
    """A world whose Ember and Sage are seats; returns the seats' URL."""
    port = _free_port()
    folder = where / "config"
    folder.mkdir(parents=True)
    for source in (PROJECT / "config").glob("*.yaml"):
        text = source.read_text()
        if source.name == "settings.yaml":
            text = text.replace("port: 8765", f"port: {port}").replace(
                "turn_seconds: 120", f"turn_seconds: {turn_seconds}")
        (folder / source.name).write_text(text)
    (folder / "agents.yaml").write_text(AGENTS.format(river=river))
    made = subprocess.run(hearth_args(where, "--config-dir", str(folder), "--init", "--seed",
                                      "5", "--size", "60x50"),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT,
                          env=clean_env())
    assert made.returncode == 0, made.stderr
    return f"http://127.0.0.1:{port}/mcp"


def _start(where: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        hearth_args(where, "--config-dir", str(where / "config"), *args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT,
        env={**clean_env(), **env})


def _tokens(where: Path) -> dict[str, str]:
    path = where / "data" / "seats.json"
    for _ in range(600):
        if path.exists():
            break
        time.sleep(0.05)
    return json.loads(path.read_text())["seats"]


def _rows(where: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"{(where / 'data' / 'world.db').as_uri()}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def _turns(where: Path, agent: str) -> list[tuple[int, str, int, dict[str, Any]]]:
    return [(t, m, n, json.loads(r)) for t, m, n, r in _rows(
        where, "SELECT tick, mind, actions, record FROM turns WHERE agent = ? ORDER BY tick",
        agent)]


def _plan(tick: int) -> list[tuple[str, dict[str, Any]]]:
    """What a seat does each turn: it looks, and walks one way or the other."""
    way = ("north", "east", "south", "west")[tick % 4]
    return [("examine", {}), ("walk", {"direction": way})]


@pytest.fixture(scope="module")
def lived(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list]]:
    """Twenty ticks of a world with two seats played by MCP clients, a Claude agent on
    the stand-in and an offline agent."""
    where = tmp_path_factory.mktemp("seated")
    url = _seated(where, turn_seconds=20)
    standin = StrictMessagesApi()
    with standin.serve() as api:
        proc = _start(where, "--run", str(TICKS), ANTHROPIC_API_KEY="test-key",
                      ANTHROPIC_BASE_URL=api)

        async def seats() -> list[list[dict[str, Any]]]:
            await listening(url)
            tokens = _tokens(where)
            over = lambda: proc.poll() is not None  # noqa: E731
            return list(await asyncio.gather(*(play(url, tokens[name], _plan, over)
                                               for name in SEATS)))

        heard = asyncio.run(seats())
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err and standin.refused == []
    assert f"Seats Ember, Sage served at {url}" in out
    return where, dict(zip(SEATS, heard, strict=True))


def test_two_seats_act_in_every_turn_they_are_given_beside_claude_and_offline(
        lived: tuple[Path, dict[str, list]]) -> None:
    where, heard = lived
    assert world_tick(where / "data") == TICKS
    for name in SEATS:
        turns = _turns(where, name)
        assert [t for t, *_ in turns] == list(range(TICKS))
        held = [turn for turn in turns if turn[3]["mind"]["ended"] != "empty"]
        # Turns before the client took the seat passed at once (how many depends on how
        # soon this busy machine connects it); from then on, every turn.
        assert len(held) >= TICKS // 2, turns
        assert held == turns[turns.index(held[0]):]
        for _, mind, actions, record in held:
            assert mind == "seat" and actions == 2
            assert record["mind"] == {"mind": "seat", "ended": "end_turn", "shown": True}
        # What each call returned is what the world recorded it doing, call for call.
        done = [{"tick": tick, "tool": a["tool"], "args": a["args"], "ok": a["ok"],
                 "text": a["text"]} for tick, _, _, record in held for a in record["actions"]]
        assert [{k: v for k, v in h.items() if k != "perception"} for h in heard[name]] == done
        moved = {t for (t,) in _rows(where, "SELECT tick FROM events WHERE agent = ? AND "
                                     "kind = 'agent_moved'", name)}
        assert moved == {h["tick"] for h in heard[name] if h["tool"] == "walk" and h["ok"]}
        assert all(h["perception"].strip() for h in heard[name])
    for name, kind in (("River", "claude"), ("Moss", "offline")):  # awake, they lived too
        theirs = _turns(where, name)
        assert theirs and {m for _, m, *_ in theirs} == {kind}
        assert sum(n for _, _, n, _ in theirs) > 0
    status = subprocess.run(hearth_args(where, "--config-dir", str(where / "config"),
                                        "--status"),
                            capture_output=True, text=True, timeout=60, cwd=PROJECT,
                            env=clean_env())
    assert "seat over MCP (empty)" in status.stdout  # nobody serves them now
    assert not (where / "data" / "seats_now.json").exists()
    assert oct((where / "data" / "seats.json").stat().st_mode & 0o777) == "0o600"


def test_a_fork_and_a_replay_of_a_seated_world_are_exact_and_call_no_client(
        lived: tuple[Path, dict[str, list]], tmp_path: Path) -> None:
    where, _ = lived
    fork = tmp_path / "fork"
    config = ["--config-dir", str(where / "config")]
    made = run(where / "data", where / "agents", *config, "--fork", "8", "--into", str(fork))
    assert made.returncode == 0, made.stdout + made.stderr
    # Nothing listens for the seats (the port is free) and no key is set: a replay that
    # asked any client or model would stop.
    done = run(fork / "data", fork / "agents", *config, "--run", str(TICKS - 8), "--quiet",
               "--mind", "replay")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "served at" not in done.stdout + done.stderr
    # Turns of different clusters commit in the order they finish (a seat's waits on its
    # client): events are compared by what they say (as test_fork_claude_cli.py does).
    mine, theirs = world(fork), world(where)
    assert [k for k in sorted(mine) if mine[k] != theirs[k]] == []
    assert len(mine["turns"]) == len(theirs["turns"]) > 0


def test_refusals_are_clear_mcp_errors_and_change_nothing(tmp_path: Path) -> None:
    url = _seated(tmp_path, turn_seconds=60, river="offline")
    proc = _start(tmp_path, "--run", "1000")
    said: dict[str, Any] = {}

    async def refusals() -> None:
        await listening(url)
        tokens = _tokens(tmp_path)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        accept = {"Accept": "application/json, text/event-stream",
                  "MCP-Protocol-Version": "2026-07-28"}
        async with httpx2.AsyncClient() as http:
            for token in (None, "not-a-token", tokens["Ember"][:-1]):
                auth = {"Authorization": f"Bearer {token}"} if token else {}
                answer = await http.post(url, json=body, headers={**accept, **auth})
                said.setdefault("unauthorized", []).append(
                    (answer.status_code, answer.json()["error"]))
        sessions: list[str] = []
        async with seat_client(url, tokens["Ember"], "legacy", sessions) as ember:
            while NOT_YET in (got := await ember.call_tool("wait_for_turn", {})).content[0].text:
                pass
            said["tick"] = tick_of([b.text for b in got.content])
            async with httpx2.AsyncClient() as http:
                other = await http.post(url, json=body, headers={
                    **accept, "MCP-Protocol-Version": "2025-11-25",
                    "Authorization": f"Bearer {tokens['Sage']}", "Mcp-Session-Id": sessions[-1]})
                said["other_token"] = other.status_code
            async with seat_client(url, tokens["Ember"], "legacy") as second:
                said["second"] = await _refused(second.call_tool("wait_for_turn", {}))
            async with seat_client(url, tokens["Sage"], "legacy") as sage:
                said["out_of_turn"] = await _refused(sage.call_tool("examine", {}))
            said["bad_input"] = await _refused(ember.call_tool("walk", {"direction": "up"}))
            said["missing"] = await _refused(ember.call_tool("walk", {}))
            said["unknown"] = await _refused(ember.call_tool("fly", {"to": "moon"}))
            looked = await ember.call_tool("examine", {})
            said["examine"] = (looked.is_error, looked.content[0].text)
            await ember.call_tool("end_turn", {})
            said["after"] = await _refused(ember.call_tool("examine", {}))

    try:
        asyncio.run(refusals())
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert said["unauthorized"] == [(401, "invalid_token")] * 3
    assert said["other_token"] == 404  # the session is not another seat's to use
    assert "held by another session" in said["second"]
    # Not Sage's turn, or (should Sage's turn open meanwhile) not one it has seen.
    assert ("it is not Sage's turn" in said["out_of_turn"]
            or "you have not seen it" in said["out_of_turn"]), said["out_of_turn"]
    assert "bad input for walk at direction: 'up' is not one of" in said["bad_input"]
    assert "bad input for walk: 'direction' is a required property" in said["missing"]
    assert "unknown tool 'fly'" in said["unknown"]
    assert said["examine"][0] is False and said["examine"][1]
    # Its turn ended (or the next has begun, unseen): either way the call is not run.
    assert (f"Ember's turn at tick {said['tick']} has ended" in said["after"]
            or "has begun and you have not seen it" in said["after"]), said["after"]
    # Only the one call that was the seat's to make happened.
    turns = {t: (n, r) for t, _, n, r in _turns(tmp_path, "Ember")}
    count, record = turns[said["tick"]]
    assert count == 1 and [a["tool"] for a in record["actions"]] == ["examine"]
    assert all(n == 0 for t, (n, _) in turns.items() if t != said["tick"])
    assert all(n == 0 for _, _, n, _ in _turns(tmp_path, "Sage"))


def test_a_client_killed_mid_turn_costs_the_world_turn_seconds_and_frees_the_seat(
        tmp_path: Path) -> None:
    turn_seconds = 3.0
    url = _seated(tmp_path, turn_seconds=turn_seconds, river="offline")
    proc = _start(tmp_path, "--run", "100000")
    try:
        token = _tokens(tmp_path)["Ember"]
        holder = subprocess.Popen([sys.executable, str(PROJECT / "tests/e2e/seat_client.py"),
                                   url, token], stdout=subprocess.PIPE, text=True,
                                  cwd=PROJECT, env={**clean_env(), "PYTHONPATH": str(PROJECT)})
        line = holder.stdout.readline() if holder.stdout else ""
        assert line.startswith("TURN "), line
        tick = int(line.split()[1])
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        killed = time.monotonic()
        while world_tick(tmp_path / "data") <= tick:  # the tick of the turn it left
            assert time.monotonic() - killed < turn_seconds + 10, "the world did not go on"
            time.sleep(0.05)
        waited = time.monotonic() - killed
        assert waited < turn_seconds + 10

        async def again() -> int:
            async with seat_client(url, token, "legacy") as client:
                until = time.monotonic() + turn_seconds * 4 + 10
                while True:
                    try:
                        got = await client.call_tool("wait_for_turn", {})
                    except MCPError as exc:  # held by the dead session until it lapses
                        assert "held by another session" in str(exc)
                        assert time.monotonic() < until
                        await asyncio.sleep(0.2)
                        continue
                    if NOT_YET not in got.content[0].text:
                        await client.call_tool("end_turn", {})
                        return tick_of([b.text for b in got.content])

        taken = asyncio.run(again())
        assert taken > tick
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    left = {t: r["mind"]["ended"] for t, _, _, r in _turns(tmp_path, "Ember")}
    assert left[tick] == "time" and left[taken] == "end_turn"


async def _refused(call: Any) -> str:
    try:
        await call
    except MCPError as exc:
        return str(exc)
    raise AssertionError("the call was not refused")


def test_a_taken_port_is_one_line_and_the_world_is_left_as_it_was(tmp_path: Path) -> None:
    url = _seated(tmp_path, turn_seconds=5, river="offline")
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen(1)
        done = subprocess.run(hearth_args(tmp_path, "--config-dir", str(tmp_path / "config"),
                                          "--run", "3"),
                              capture_output=True, text=True, timeout=120, cwd=PROJECT,
                              env=clean_env())
    assert done.returncode == 1, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and "cannot serve the seats at 127.0.0.1:" in said[0], said
    assert "is another world running? set seats.port" in said[0]
    assert world_tick(tmp_path / "data") == 0
    assert not (tmp_path / "data" / "seats_now.json").exists()
