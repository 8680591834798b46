"""The Gardener's history figures worked out again, row by row in plain Python.

Tests of storage.gardener_source compare what the source answers with these, which
read every row of the tables and decide each case by the rule as the Gardener
describes it, never by asking the code under test.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from storage.gardener_source import LASTING_CHANGE_KINDS


def events(table: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every event as written, in the order written."""
    return [json.loads(data) for (data,) in table.execute("SELECT data FROM events ORDER BY seq")]


def last_social(table: sqlite3.Connection, since: int = 0) -> dict[str, int]:
    """Agent -> the latest tick (>= since) of a social event naming it, from the JSON's
    own keys; an invitation that lapsed unanswered is not company."""
    last: dict[str, int] = {}
    for event in events(table):
        if event["category"] != "social" or event["type"] == "invitation_expired" \
                or event["tick"] < since:
            continue
        parties = {event.get(key) for key in ("agent", "other", "recipient", "invitee",
                                                "inviter")}
        parties.update(event.get("participants", ()))
        for name in parties - {None}:
            last[name] = max(last.get(name, -1), event["tick"])
    return last


def asleep(table: sqlite3.Connection, since: int, now: int) -> dict[str, int]:
    """Tick by tick from the world's start: asleep at t when the agent's latest sleep or
    wake at or before t was a sleep (every agent starts awake)."""
    changes = [(e["agent"], e["tick"], e["type"] == "agent_slept") for e in events(table)
               if e["type"] in ("agent_slept", "agent_woke")]
    names = [name for (name,) in table.execute("SELECT name FROM agents")]
    out = {}
    for name in names:
        mine = [(tick, sleeping) for agent, tick, sleeping in changes if agent == name]
        count = 0
        for t in range(max(0, since), now):
            done = [sleeping for tick, sleeping in mine if tick <= t]
            count += bool(done and done[-1])
        out[name] = count
    return out


def actions(table: sqlite3.Connection, since: int, until: int) -> dict[str, tuple[int, int]]:
    """Agent -> (actions, failed actions) in the turn records of ticks [since, until)."""
    out: dict[str, tuple[int, int]] = {}
    for agent, tick, record in table.execute("SELECT agent, tick, record FROM turns"):
        if not since <= tick < until:
            continue
        done = json.loads(record)["actions"]
        if done:
            count, failed = out.get(agent, (0, 0))
            out[agent] = (count + len(done),
                          failed + sum(1 for a in done if a["ok"] is False))
    return out


def lasting_changes(table: sqlite3.Connection, since: int, until: int) -> int:
    """Events at ticks [since, until) of the kinds that leave something behind."""
    return sum(1 for e in events(table)
               if since <= e["tick"] < until and e["type"] in LASTING_CHANGE_KINDS)
