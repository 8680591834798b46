"""`hearth --compare DIR_A DIR_B`: from which tick two worlds differ, per agent, and how.

Two branches of one world (a parent and its fork, or two forks) share their past up to
the fork and may part after it. Walking the ticks both have lived, oldest first, an
agent's tick differs when what it did (its turn's calls: tool, arguments, outcome, the
words it heard) or what happened to it (its events: steps, loads, lines said) is not the
same in both. The first such tick is that agent's parting; the report then says what each
branch had it do at that tick, and how the agent stands now in each: position, inventory,
structures it built, how much it said, and its personality, model and mind if they differ.

Both worlds are read through `mode=ro` connections, one tick at a time (the tick index),
and the walk stops early once every agent has parted, so comparing beside a running
world, or two long histories, reads little.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from storage.errors import StorageError
from storage.lineage import read_lineage
from storage.world_fork import read_only


def world_db(folder: Path) -> Path:
    """The world.db a folder names: itself a data folder, or one holding data/."""
    for candidate in (folder / "world.db", folder / "data" / "world.db"):
        if candidate.is_file():
            return candidate
    raise StorageError(f"{folder}: no world here (neither {folder / 'world.db'} nor "
                       f"{folder / 'data' / 'world.db'})")


class _World:
    def __init__(self, folder: Path) -> None:
        self.db = world_db(folder)
        self.conn = read_only(self.db)
        self.tick = int(self.conn.execute("SELECT tick FROM world_state").fetchone()[0])
        self.agents = {str(r[0]): r[1:] for r in self.conn.execute(
            "SELECT name, personality, model_id, x, y FROM agents")}
        self.minds = {str(a): str(k) for a, k in self.conn.execute(
            "SELECT agent, kind FROM minds")}

    def tick_of(self, tick: int) -> dict[str | None, tuple[list[Any], list[Any]]]:
        """agent (None: the world) -> (its turn's actions, its events) at `tick`."""
        out: dict[str | None, tuple[list[Any], list[Any]]] = {}
        for agent, record in self.conn.execute(
                "SELECT agent, record FROM turns WHERE tick = ?", (tick,)):
            try:
                actions = json.loads(record).get("actions", [])
            except (ValueError, AttributeError):
                actions = [record]
            out.setdefault(agent, ([], []))[0].extend(actions)
        for agent, kind, data in self.conn.execute(
                "SELECT agent, kind, data FROM events WHERE tick = ? ORDER BY seq", (tick,)):
            out.setdefault(agent, ([], []))[1].append((kind, data))
        return out

    def now(self, agent: str) -> dict[str, Any]:
        row = self.agents.get(agent)
        if row is None:
            return {"present": False}
        personality, model, x, y = row
        stacks = {str(r): int(q) for r, q in self.conn.execute(
            "SELECT resource, quantity FROM inventory_stacks WHERE agent_name = ?", (agent,))}
        for (item,) in self.conn.execute(
                "SELECT item_type FROM inventory_items WHERE agent_name = ?", (agent,)):
            stacks[str(item)] = stacks.get(str(item), 0) + 1
        built = [str(n or i) for i, n in self.conn.execute(
            "SELECT id, name FROM structures WHERE created_by = ? ORDER BY id", (agent,))]
        said = int(self.conn.execute("SELECT COUNT(*) FROM conversation_turns WHERE speaker = ?",
                                     (agent,)).fetchone()[0])
        return {"present": True, "position": [int(x), int(y)], "inventory": stacks,
                "structures": built, "lines_said": said, "personality": personality,
                "model": model, "mind": self.minds.get(agent)}

    def close(self) -> None:
        self.conn.close()


def _since(a: _World, b: _World) -> int:
    """Where the walk may start: a fork holds its parent's ticks before the fork as they
    were (engine/fork.py checks it), so those need no comparing."""
    for one, other in ((a, b), (b, a)):
        lineage = read_lineage(one.db.parent)
        if lineage is not None and Path(lineage.parent).resolve() == other.db.parent.resolve():
            return lineage.tick
    la, lb = read_lineage(a.db.parent), read_lineage(b.db.parent)
    if la is not None and lb is not None and Path(la.parent).resolve() == Path(lb.parent).resolve():
        return min(la.tick, lb.tick)
    return 0


def _did(actions: list[Any]) -> list[str]:
    """A turn's calls in a few words each."""
    out = []
    for action in actions:
        if not isinstance(action, dict):
            out.append(str(action)[:80])
            continue
        args = json.dumps(action.get("args", {}), ensure_ascii=False, sort_keys=True)
        out.append(f"{action.get('tool')} {args}" + ("" if action.get("ok") else " (failed)"))
    return out or ["nothing"]


def compare(folder_a: Path, folder_b: Path) -> dict[str, Any]:
    """The comparison as plain data (what --json prints)."""
    a, b = _World(Path(folder_a)), _World(Path(folder_b))
    try:
        names = sorted(a.agents.keys() | b.agents.keys())
        upto = min(a.tick, b.tick)
        start = _since(a, b)
        parted: dict[str | None, dict[str, Any]] = {}
        for tick in range(start, upto):
            if len(parted) == len(names) + 1:
                break
            seen_a, seen_b = a.tick_of(tick), b.tick_of(tick)
            for who in seen_a.keys() | seen_b.keys():
                if who in parted:
                    continue
                here, there = seen_a.get(who, ([], [])), seen_b.get(who, ([], []))
                if here != there:
                    parted[who] = {"tick": tick, "a": _did(here[0]), "b": _did(there[0]),
                                   "events_a": len(here[1]), "events_b": len(there[1])}
        agents: dict[str, Any] = {}
        for name in names:
            now_a, now_b = a.now(name), b.now(name)
            differs = {k: [now_a.get(k), now_b.get(k)] for k in now_a.keys() | now_b.keys()
                       if now_a.get(k) != now_b.get(k)}
            agents[name] = {"first_tick": parted.get(name, {}).get("tick"),
                            "at_first": parted.get(name), "now_differs": differs}
        firsts = [p["tick"] for p in parted.values()]
        return {"a": str(a.db.parent), "b": str(b.db.parent), "ticks": [a.tick, b.tick],
                "compared_from": start, "compared_to": upto,
                "first_tick": min(firsts) if firsts else None,
                "world_first_tick": parted.get(None, {}).get("tick"),
                "agents": agents}
    finally:
        a.close()
        b.close()


def report_lines(result: Mapping[str, Any]) -> list[str]:
    """The comparison in words, one agent a paragraph."""
    ta, tb = result["ticks"]
    lines = [f"A: {result['a']} (tick {ta})", f"B: {result['b']} (tick {tb})",
             f"compared ticks {result['compared_from']} to {result['compared_to'] - 1}"
             + (" (the ticks before are shared history)" if result["compared_from"] else "")]
    if result["first_tick"] is None:
        lines.append("No agent did anything differently in the ticks both have lived.")
    else:
        first = [n for n, v in result["agents"].items() if v["first_tick"] == result["first_tick"]]
        lines.append(f"The worlds first differ at tick {result['first_tick']}"
                     + (f", in {', '.join(first)}." if first else " (the world itself)."))
    if result["world_first_tick"] is not None:
        lines.append(f"The world's own happenings (weather, the Gardener) differ from tick "
                     f"{result['world_first_tick']}.")
    for name, seen in result["agents"].items():
        at = seen["at_first"]
        if at is None and not seen["now_differs"]:
            lines.append(f"{name}: the same in both.")
            continue
        lines.append(f"{name}: " + (f"differs from tick {at['tick']}" if at else
                                    "did the same in every tick compared"))
        if at:
            lines.append(f"  at tick {at['tick']}, A: {'; '.join(at['a'])[:200]}")
            lines.append(f"  at tick {at['tick']}, B: {'; '.join(at['b'])[:200]}")
            if at["events_a"] != at["events_b"]:
                lines.append(f"  events that tick: {at['events_a']} in A, {at['events_b']} in B")
        for key in ("position", "inventory", "structures", "lines_said", "personality",
                    "model", "mind", "present"):
            if key in seen["now_differs"]:
                va, vb = seen["now_differs"][key]
                lines.append(f"  now {key.replace('_', ' ')}: A {_short(va)}, B {_short(vb)}")
    return lines


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


def compare_command(folder_a: Path, folder_b: Path, *, as_json: bool) -> int:
    """Print the comparison; 0 whether or not they differ (a difference is an answer)."""
    try:
        result = compare(folder_a, folder_b)
    except sqlite3.Error as exc:
        raise StorageError(f"comparing {folder_a} and {folder_b} failed ({exc})") from None
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for line in report_lines(result):
            print(line, file=sys.stdout)
    return 0
