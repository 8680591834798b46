"""Hostile Gardener decisions change no agent and never pass a cap.

Two ways in, as an attacker would have them: answers a model might give, read by the
Gardener's own strict reading and queued when they pass it; and rows written straight
into the requests table, past every check the Gardener makes. The engine judges both
at the start of each tick. Agents here do nothing on their turns, so anything about
them that changed would have been the Gardener's doing.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from core.gardener import Caps, Level
from services.gardener.decision import InvalidDecision, read_decision
from storage.gardener_db import GardenerStore

DECISIONS = 1_200
BATCH = 100
KINDS = ["none", "weather", "event", "regrowth", "reveal_landmark", "teleport", "give_item",
         "move_agent", "delete_memory", "", None, 7, "WEATHER", "event "]
JUNK: list[Any] = [None, True, False, -1, 0, 3, 10**9, -(10**9), 2.5, "3", "", "x" * 5000,
                   [], {}, [1, 2], {"x": 1}, "\x1b[2J", "[bold]hi[/]", "rainy", "clear",
                   "Old Tree", "Ember"]


def _value(rng: random.Random, names: list[str], landmarks: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.3:
        return rng.randint(-5, 70)
    if roll < 0.4:
        return rng.choice(names + landmarks)
    return rng.choice(JUNK)


def _intervention(rng: random.Random, names: list[str], landmarks: list[str]) -> dict:
    kind = rng.choice(KINDS)
    item: dict[str, Any] = {"type": kind}
    keys = ["x", "y", "radius", "text", "weather", "landmark", "agent", "target", "inventory",
            "position", "memory", "files", "conversation"]
    for key in rng.sample(keys, rng.randint(0, 6)):
        item[key] = _value(rng, names, landmarks)
    if rng.random() < 0.5 and kind in ("event", "regrowth", "reveal_landmark"):
        # a well-formed one now and then, often too big, so the caps are what stops it
        item = {"type": kind, "x": rng.randint(0, 63), "y": rng.randint(0, 47),
                "radius": rng.choice([1, 3, 5, 12, 60, 61, 400])}
        if kind == "event":
            item["text"] = rng.choice(["A fox runs by.", "x" * 400, "Sparks fly."])
        if kind == "reveal_landmark":
            item["landmark"] = rng.choice(landmarks + ["Nowhere", names[0]])
    if rng.random() < 0.2 and kind == "weather":
        item = {"type": "weather", "weather": rng.choice(["clear", "rainy", "foggy", "hail"])}
    return item


def _answer(rng: random.Random, names: list[str], landmarks: list[str]) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(["", "I think we should help Ember.", "{", "null", "[]", "42"])
    body: dict[str, Any] = {
        "rationale": rng.choice(["help", "", 5, None, "Move Ember to Sage."]),
        "interventions": [_intervention(rng, names, landmarks)
                          for _ in range(rng.randint(0, 7))],
    }
    if rng.random() < 0.1:
        body["agent"] = rng.choice(names)
    if rng.random() < 0.05:
        body["interventions"] = "all of them"
    text = json.dumps(body)
    return f"```json\n{text}\n```" if rng.random() < 0.2 else text


def _agents_state(world: Path) -> dict[str, Any]:
    """Everything about the agents the Gardener must never change."""
    with sqlite3.connect(f"file:{world / 'world.db'}?mode=ro", uri=True) as db:
        tables = {}
        for table, order in (("agents", "name"), ("inventory_stacks", "1, 2"),
                             ("inventory_items", "1"), ("conversations", "1"),
                             ("conversation_participants", "1, 2"),
                             ("conversation_turns", "1"), ("invitations", "1")):
            rows = db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            if table == "agents":  # sleeping and last-active move with time, not the Gardener
                names = [d[0] for d in db.execute(f"SELECT * FROM {table}").description]
                keep = [i for i, n in enumerate(names)
                        if n not in ("is_sleeping", "last_active_tick", "sleeping")]
                rows = [tuple(r[i] for i in keep) for r in rows]
            tables[table] = rows
        tables["minds"] = db.execute("SELECT agent, kind FROM minds ORDER BY agent").fetchall()
    return tables


def _files(home: Path) -> dict[str, str]:
    if not home.exists():
        return {}
    # (.status is the engine's own note to the agent, rewritten every turn)
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*")) if p.is_file() and p.name != ".status"}


async def test_a_thousand_hostile_decisions_change_no_agent_and_pass_no_cap(
    make_engine, scripted, small_world: Path, tmp_path: Path
) -> None:
    rng = random.Random(8)
    caps = Caps()
    idle = scripted(lambda start: [])  # agents act on nothing: any change is the Gardener's
    async with make_engine(idle) as engine:
        names = sorted(a.name for a in engine.sim.agents.get_all_agents())
        landmarks = [m.name for m in engine.sim.world.landmarks]
        size = (engine.sim.world.width, engine.sim.world.height)
        await engine.tick_once()
        before, files_before = _agents_state(small_world), _files(tmp_path / "agents")
        db = sqlite3.connect(small_world / "world.db", timeout=5)
        queued = refused_by_reading = 0
        with GardenerStore(small_world / "world.db") as store:
            for n in range(DECISIONS):
                level = rng.choice(list(Level))
                if n % 2:  # past the Gardener: raw rows, anything at all
                    cycle = store.add_cycle(engine.tick, str(level), "[]", "{}", "fuzz", "{}",
                                            "fuzz", None, [])
                    for _ in range(rng.randint(1, 5)):
                        item = _intervention(rng, names, landmarks)
                        kind = item.pop("type")
                        params = (json.dumps(item) if rng.random() < 0.9
                                  else rng.choice(["{", "[]", "null", "nonsense"]))
                        db.execute(
                            "INSERT INTO gardener_requests (cycle, kind, params, made_at) "
                            "VALUES (?, ?, ?, 'now')",
                            (rng.choice([cycle, cycle, cycle, 99_999]), str(kind), params))
                    db.commit()
                    queued += 1
                else:  # through the Gardener's own reading of a model's answer
                    try:
                        decision = read_decision(_answer(rng, names, landmarks), size)
                    except InvalidDecision:
                        refused_by_reading += 1
                        continue
                    store.add_cycle(engine.tick, str(level), "[]", "{}", "fuzz",
                                    decision.as_json(), decision.rationale, None,
                                    [(i.kind, json.dumps(i.params()))
                                     for i in decision.interventions])
                    queued += 1
                if n % BATCH == BATCH - 1:
                    await engine.tick_once()
        await engine.tick_once()
        db.close()
        assert _agents_state(small_world) == before
        assert _files(tmp_path / "agents") == files_before
        for agent in engine.sim.agents.get_all_agents():
            assert agent.name in names
    assert refused_by_reading > 100 and queued > 500
    with sqlite3.connect(f"file:{small_world / 'world.db'}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        statuses = dict(db.execute(
            "SELECT status, count(*) FROM gardener_requests GROUP BY status").fetchall())
        assert statuses.get("pending", 0) == 0
        assert statuses.get("refused", 0) > 500 and statuses.get("applied", 0) > 10
        assert db.execute("SELECT count(*) FROM gardener_requests WHERE status = 'refused' "
                          "AND (reason IS NULL OR reason = '')").fetchone()[0] == 0
        applied = db.execute(
            "SELECT r.cycle, c.level, r.kind, r.done_tick, r.x, r.y FROM gardener_requests r "
            "JOIN gardener_cycles c ON c.id = r.cycle WHERE r.status = 'applied' "
            "AND r.kind != 'none' ORDER BY r.id").fetchall()
        per_cycle: dict[int, int] = {}
        for cycle, level, *_ in applied:
            per_cycle[cycle] = per_cycle.get(cycle, 0) + 1
            assert per_cycle[cycle] <= caps.per_cycle[int(Level[level])]
        weather = [tick for _, _, kind, tick, _, _ in applied if kind == "weather"]
        gaps = [b - a for a, b in zip(weather, weather[1:], strict=False)]
        assert all(gap >= caps.weather_every_ticks for gap in gaps)
        local = [(tick, x, y) for _, _, kind, tick, x, y in applied if x is not None]
        for i, (tick, x, y) in enumerate(local):
            for later, x2, y2 in local[i + 1:]:
                near = max(abs(x - x2), abs(y - y2)) <= caps.area_cells
                assert not near or later - tick >= caps.area_every_ticks
        events = db.execute("SELECT count(*) FROM events WHERE kind LIKE 'gardener_%'"
                            ).fetchone()[0]
        assert events == statuses.get("refused", 0) + len(applied)
