"""A fork of a Claude world between snapshots holds each mind's memory of its tick (issue 30).

Claude minds (the real SDK over the strict stand-in) live five ticks of the real engine
with a snapshot every two ticks and small compaction limits; the world is forked at
tick 3 (walked on from the snapshot of tick 2 by the replay mind) and every `minds` row
must be the mind's own state after tick 3, written at the tick the engine wrote it.
Then one record the walk needs loses its messages (a record that cannot rebuild the
memory): the fork says so in one line and keeps that agent's memory as at the snapshot,
the others' rebuilt all the same.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from config import HearthConfig
from core.types import AgentName
from engine.fork import fork_world
from tests.e2e.worlds import minds_rows
from tests.integration.ticks.test_memory_rebuild import (
    LIMITS,
    _canonical,
    _names,
    claude_over_standin,
)

TICKS, FORK_AT, SNAPSHOT = 5, 3, 2


def _configured(config: HearthConfig) -> HearthConfig:
    storage = config.settings.storage.model_copy(update={"snapshot_every_ticks": SNAPSHOT})
    claude = config.settings.claude.model_copy(update=LIMITS)
    scheduling = config.settings.scheduling.model_copy(update={"max_actions_per_turn": 2})
    return dataclasses.replace(config, settings=config.settings.model_copy(update={
        "storage": storage, "claude": claude, "scheduling": scheduling}))


async def test_a_fork_between_snapshots_holds_each_claude_minds_memory_of_its_tick(
        make_engine, small_world: Path, config: HearthConfig, tmp_path: Path) -> None:
    config = _configured(config)
    names = await _names(small_world)
    api, mind = await claude_over_standin(names)
    lived: list[dict[str, str]] = []
    written: dict[str, int] = {}  # the tick each agent's memory last changed
    async with make_engine(mind, config=config) as engine:
        for tick in range(TICKS):
            assert (await engine.tick_once()).completed
            states = {n: _canonical(mind.get_state(AgentName(n))) for n in names}
            written.update({n: tick for n in names
                            if not lived or lived[-1][n] != states[n]})
            lived.append(states)
            if tick == FORK_AT - 1:
                at_fork = dict(written)
    assert api.refused == []
    asked = len(api.served)
    parent = small_world
    snapshot = minds_rows(parent / "snapshots" / f"snapshot_{SNAPSHOT}.db")
    want = {n: ("claude", lived[FORK_AT - 1][n], at_fork[n]) for n in names}
    assert all(snapshot[n] != want[n] for n in names)  # every memory changed since

    report = await fork_world(parent, config, FORK_AT, tmp_path / "fork")
    assert report.base == SNAPSHOT and report.notes == ()
    assert minds_rows(tmp_path / "fork" / "data" / "world.db") == want
    assert len(api.served) == asked  # no model was asked

    damaged = names[0]
    conn = sqlite3.connect(parent / "world.db")
    try:
        (record,) = conn.execute("SELECT record FROM turns WHERE tick = ? AND agent = ?",
                                 (SNAPSHOT, damaged)).fetchone()
        record = json.loads(record)
        del record["mind"]["messages"]
        conn.execute("UPDATE turns SET record = ? WHERE tick = ? AND agent = ?",
                     (_canonical(record), SNAPSHOT, damaged))
        conn.commit()
    finally:
        conn.close()
    report = await fork_world(parent, config, FORK_AT, tmp_path / "again")
    assert report.notes == (
        f"{damaged}'s memory is as at the snapshot of tick {SNAPSHOT}, not tick {FORK_AT}: "
        f"its turn at tick {SNAPSHOT} holds no messages to rebuild the memory from (a "
        "record older than them, or damaged)",)
    forked = minds_rows(tmp_path / "again" / "data" / "world.db")
    assert forked[damaged] == snapshot[damaged]
    assert {n: forked[n] for n in names[1:]} == {n: want[n] for n in names[1:]}
