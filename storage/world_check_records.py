"""The engine's own records and the world's identity, held to what their readers need.

Part of `storage.world_check.check_world` (which calls `check_records`), kept apart
because events and turns are checked differently: they grow with every turn of every
tick (1,500 events a tick on 1,000 agents; after 2,000 ticks one json_valid() pass
over the events took 250 ms), so a start never reads them row by row. Checked of them
is what is parsed without a guard of its own: the lines the observer recalls when it
opens (the narrated events and the turns of the last RECENT_TICKS ticks, which
storage/history.py parses as they are), the first event (the event log is compared
with it) and, through the tick index, that no tick is negative or not a number. Every
other event is parsed by a reader that refuses a damaged one in one line naming it,
before anything is written (`storage.repositories.engine.event_data`: the event log's
tail or rebuild, the Gardener's happenings). Older turns: recall and the spend meter
skip a record they cannot read (services/recall.py, services/budget.py), the Gardener's
cycle stops in one line, and the observer's history, browsed back to a row that does
not parse, says so in a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from storage.database import Database
from storage.history import NARRATED_EVENTS
from storage.world_check_common import KnownWorld, Problems, is_int, read_json, show

RECENT_TICKS = 3
"""Ticks back from the world's tick whose narrated events and turns are checked: the
observer recalls the last three ticks' lines when it opens (observe/api.py, watching.py).
On 1,000 agents 10 ticks old: turns 1.2 ms (every record parsed), events 0.7 ms (3.0
million events: 0.6 ms)."""
METRICS_READ = 100
"""The newest tick_metrics rows checked: all that `--status` reads (services/status.py)."""
WORLD_ID = re.compile(r"[0-9a-f]{32}")
"""A world's identity as migration 8 makes it: lower(hex(randomblob(16)))."""

_NOT_OBJECT = ("CASE WHEN typeof({0}) = 'text' AND json_valid({0}) THEN json_type({0}) END "
               "IS NOT 'object'")
"""SQL true for a column that is not text holding a JSON object (json_type() alone raises
on malformed JSON, so it is asked only of valid text)."""
_NARRATED = ",".join("?" * len(NARRATED_EVENTS))
_NOT_A_TICK = "tick < 0 OR tick >= ''"
"""SQL true for a negative tick or one stored as text or bytes (which sort after every
number): two seeks in a tick index, however long the table."""


async def check_records(db: Database, world: KnownWorld, found: Problems) -> None:
    now = world.tick
    if "minds" in world.tables:
        await _check_minds(db, world, found, now)
    if "events" in world.tables:
        await _check_events(db, found, now)
    if "turns" in world.tables:
        await _check_turns(db, found, now)
    if "tick_metrics" in world.tables:
        await _check_metrics(db, found)
    if "world_identity" in world.tables:
        await _check_identity(db, found)


async def _check_minds(db: Database, world: KnownWorld, found: Problems, now: int | None) -> None:
    for agent, kind, state in await db.fetchall("SELECT agent, kind, state FROM minds"):
        key = show(agent)
        if agent not in world.agents:
            found.add("minds", key, f"the mind of {show(agent)}, who is no agent")
        if not isinstance(kind, str) or not kind:
            found.add("minds", key, f"kind {show(kind)} is empty")
        value, wrong = read_json(state)
        if wrong:
            found.add("minds", key, f"state {wrong}")
        elif not isinstance(value, dict):
            found.add("minds", key, f"state {show(value)} is not a JSON object")
    for tick, schedule in await db.fetchall("SELECT tick, schedule FROM tick_progress"):
        if not is_int(tick) or (now is not None and tick > now):
            found.add("tick_progress", "1", f"tick {show(tick)} is not a tick up to the world's "
                                            f"{now}")
        value, wrong = read_json(schedule)
        if wrong:
            found.add("tick_progress", "1", f"schedule {wrong}")
        elif not isinstance(value, list) or not all(
                isinstance(c, list) and all(isinstance(n, str) for n in c) for c in value):
            found.add("tick_progress", "1", f"schedule {show(value)} is not a list of lists "
                                            "of names")
        elif stray := [n for n in _flat(value) if n not in world.agents]:
            found.add("tick_progress", "1", f"schedule names {show(stray[0])}, who is no agent")


def _flat(clusters: Iterable[Iterable[str]]) -> list[str]:
    return [name for cluster in clusters for name in cluster]


async def _check_events(db: Database, found: Problems, now: int | None) -> None:
    """One query (each costs a thread hop), its parts UNION ALL so each keeps its index
    (a plain UNION merged them by scanning the table): the first event, those at no
    tick, the recent narrated ones that are no JSON object, and the count that numbers
    the next event."""
    rows = await db.fetchall(
        "SELECT * FROM (SELECT seq, tick, data FROM events ORDER BY seq LIMIT 1) "
        f"UNION ALL SELECT seq, tick, data FROM events WHERE {_NOT_A_TICK} "
        f"UNION ALL SELECT seq, tick, data FROM events WHERE tick >= ? AND kind IN "
        f"({_NARRATED}) AND {_NOT_OBJECT.format('data')} "
        "UNION ALL SELECT NULL, (SELECT seq FROM sqlite_sequence WHERE name = 'events'), "
        "(SELECT MAX(seq) FROM events)",
        (now - RECENT_TICKS if now is not None else None, *NARRATED_EVENTS))
    _check_sequence(found, *next(row[1:] for row in rows if row[0] is None))
    for seq, tick, data in sorted({row for row in rows if row[0] is not None}):
        if not is_int(tick) or tick < 0:
            found.add("events", str(seq), f"tick {show(tick)} is not a whole number from 0")
        value, wrong = read_json(data)
        if wrong or not isinstance(value, dict):
            found.add("events", str(seq), f"data {wrong or f'{show(value)} is not a JSON object'}")


async def _check_turns(db: Database, found: Problems, now: int | None) -> None:
    rows = await db.fetchall(
        f"SELECT tick, agent, record FROM turns WHERE {_NOT_A_TICK} UNION ALL "
        f"SELECT tick, agent, record FROM turns WHERE tick >= ? AND "
        f"{_NOT_OBJECT.format('record')}", (now - RECENT_TICKS if now is not None else None,))
    for tick, agent, record in dict.fromkeys(rows):  # a text tick is in both parts
        key = f"{show(tick)} {show(agent)}"
        if not is_int(tick) or tick < 0:
            found.add("turns", key, f"tick {show(tick)} is not a whole number from 0")
        else:  # a recent turn, picked for its record
            value, wrong = read_json(record)
            found.add("turns", key, f"record {wrong or f'{show(value)} is not a JSON object'}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


async def _check_metrics(db: Database, found: Problems) -> None:
    for tick, duration, phases in await db.fetchall(
            "SELECT tick, duration_ms, phases FROM tick_metrics ORDER BY tick DESC LIMIT ?",
            (METRICS_READ,)):
        if not _is_number(duration):
            found.add("tick_metrics", str(tick), f"duration_ms {show(duration)} is not a number")
        value, wrong = read_json(phases)
        if wrong:
            found.add("tick_metrics", str(tick), f"phases {wrong}")
        elif not isinstance(value, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                and _is_number(p[1]) for p in value):
            found.add("tick_metrics", str(tick), f"phases {show(value)} is not a list of "
                                                 "[phase, milliseconds] pairs")


async def _check_identity(db: Database, found: Problems) -> None:
    """Side files (undo logs, snapshots) are told apart by the identity in row 1: with
    none, every one is taken for this world's; with one of another form, this world's
    own may not be."""
    rows = await db.fetchall("SELECT id, world_id FROM world_identity")
    if not any(rid == 1 for rid, _ in rows):
        found.add("world_identity", "1", "no row: the world has no identity, so another "
                                         "world's undo logs and snapshots would pass for its own")
    for rid, world_id in rows:
        if rid != 1:
            found.add("world_identity", show(rid), "a second identity; a world has one, row 1")
        elif not (isinstance(world_id, str) and WORLD_ID.fullmatch(world_id)):
            found.add("world_identity", "1", f"world_id {show(world_id)} is not the 32 hex "
                                             "digits a world is given")


def _check_sequence(found: Problems, kept: Any, last: Any) -> None:
    """A new event's seq is read from sqlite_sequence before it is inserted (the event
    log numbers its lines by it), while SQLite numbers the row past the table's largest:
    a count set back makes the log's numbers differ from the table's, unseen."""
    if last is None or (is_int(kept) and kept >= last):
        return
    kept_text = "no row" if kept is None else f"seq {show(kept)}"
    found.add("sqlite_sequence", "'events'", f"{kept_text}, behind the last event's seq {last} "
                                             "(new events would be logged under wrong numbers)")
