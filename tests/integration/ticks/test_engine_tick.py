"""HearthEngine on a real world file: ticks commit, turns are atomic, failures stay contained."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from storage import Storage


def _rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _stop_after_turns(engine, count: int) -> list[str]:
    """Make `engine` ask to stop once `count` turns have run; the list fills with who acted."""
    original = engine.run_agent_turn
    done: list[str] = []

    async def counted(name, tick):
        result = await original(name, tick)
        done.append(name)
        if len(done) == count:
            engine.request_stop()
        return result

    engine.run_agent_turn = counted
    return done


async def test_a_tick_gives_every_awake_agent_a_turn_and_advances_the_counter(
    scripted, make_engine, small_world: Path
) -> None:
    mind = scripted()
    async with make_engine(mind) as engine:
        names = sorted(a.name for a in engine.sim.agents.get_all_agents())
        ctx = await engine.tick_once()
        assert ctx.completed and not ctx.resumed
        assert sorted(ctx.turn_results) == names
        assert engine.tick == 1
        assert [p for p, _ in ctx.phase_ms] == list(engine.pipeline.names)
    db = small_world / "world.db"
    assert _rows(db, "SELECT tick FROM world_state") == [(1,)]
    assert sorted(r[0] for r in _rows(db, "SELECT agent FROM turns WHERE tick = 0")) == names
    assert _rows(db, "SELECT COUNT(*) FROM tick_progress") == [(0,)]
    phases = json.loads(_rows(db, "SELECT phases FROM tick_metrics WHERE tick = 0")[0][0])
    assert [p for p, _ in phases] == list(engine.pipeline.names)


async def test_each_agent_hears_the_narration_of_its_own_action(scripted, make_engine) -> None:
    mind = scripted(lambda s: [("gather", {}), ("walk", {"direction": "north"})])
    async with make_engine(mind) as engine:
        ctx = await engine.tick_once()
    for result in ctx.turn_results.values():
        assert [a.tool for a in result.actions] == ["gather", "walk"]
        assert all(a.narration for a in result.actions)


async def test_events_reach_the_database_and_the_jsonl_log_exactly_once(
    scripted, make_engine, small_world: Path
) -> None:
    mind = scripted(lambda s: [("walk", {"direction": "east"})])
    async with make_engine(mind) as engine:
        for _ in range(3):
            await engine.tick_once()
    db_events = _rows(small_world / "world.db", "SELECT seq, kind FROM events ORDER BY seq")
    lines = [json.loads(x) for x in (small_world / "events.jsonl").read_text().splitlines()]
    assert [(x["seq"], x["type"]) for x in lines] == db_events
    assert any(kind == "agent_moved" for _, kind in db_events)


async def test_a_failing_mind_ends_its_own_turn_and_no_other(scripted, make_engine) -> None:
    async with make_engine(scripted()) as engine:
        victim = sorted(a.name for a in engine.sim.agents.get_all_agents())[0]
    mind = scripted(fail_for=frozenset({victim}))
    async with make_engine(mind) as engine:
        ctx = await engine.tick_once()
        assert ctx.completed
        assert ctx.turn_results[victim].ended == "error"
        assert "scripted failure" in ctx.turn_results[victim].error
        others = [r for n, r in ctx.turn_results.items() if n != victim]
        assert others and all(r.ended != "error" and r.actions for r in others)


async def test_the_action_limit_ends_a_turn(scripted, make_engine, config) -> None:
    limit = config.settings.scheduling.max_actions_per_turn
    mind = scripted(lambda s: [("examine", {})] * 3, rounds=100)
    async with make_engine(mind) as engine:
        ctx = await engine.tick_once()
    for result in ctx.turn_results.values():
        assert len(result.actions) == limit and result.ended == "action_limit"


async def test_a_stopped_tick_is_resumed_with_only_the_agents_that_had_not_acted(
    scripted, make_engine, small_world: Path
) -> None:
    first = scripted()
    async with make_engine(first) as engine:
        engine.committer.batch_turns = 1  # commit each turn as it ends
        done = _stop_after_turns(engine, 2)
        ctx = await engine.tick_once()
        assert ctx.stopped and not ctx.completed and engine.tick == 0
    assert sorted(_rows(small_world / "world.db", "SELECT agent FROM turns")) == sorted(
        (n,) for n in done)

    second = scripted()
    async with make_engine(second) as engine:
        everyone = {a.name for a in engine.sim.agents.get_all_agents()}
        ctx = await engine.tick_once()
        assert ctx.resumed and ctx.completed and engine.tick == 1
        assert {s.agent for s in second.starts} == everyone - set(done)
    turns = _rows(small_world / "world.db", "SELECT agent FROM turns WHERE tick = 0")
    assert sorted(t[0] for t in turns) == sorted(everyone)


async def test_mind_state_is_given_back_after_a_restart(scripted, make_engine) -> None:
    async with make_engine(scripted()) as engine:
        for _ in range(2):
            await engine.tick_once()
    mind = scripted()
    async with make_engine(mind):
        assert mind.turns and set(mind.turns.values()) == {2}


async def test_a_mind_row_is_rewritten_only_when_its_state_changed(
    scripted, make_engine, small_world: Path
) -> None:
    class Steady(scripted):
        def get_state(self, agent):
            return {"mood": "calm"}

    async with make_engine(Steady()) as engine:
        for _ in range(3):
            await engine.tick_once()
    rows = _rows(small_world / "world.db", "SELECT state, tick FROM minds")
    assert rows and {r for r in rows} == {('{"mood":"calm"}', 0)}

    async with make_engine(scripted()) as engine:  # counts turns: changes every time
        await engine.tick_once()
        await engine.tick_once()
    rows = _rows(small_world / "world.db", "SELECT state, tick FROM minds")
    assert {r for r in rows} == {('{"turns":2}', 4)}


async def test_a_mind_may_hand_its_state_as_json_text(
    scripted, make_engine, small_world: Path
) -> None:
    class Texty(scripted):
        def state_json(self, agent):
            return '{"kept":"as text"}'

    class Broken(scripted):
        def state_json(self, agent):
            raise RuntimeError("no memory today")

    async with make_engine(Texty()) as engine:
        await engine.tick_once()
    assert {r[0] for r in _rows(small_world / "world.db", "SELECT state FROM minds")} == {
        '{"kept":"as text"}'}
    async with make_engine(Broken()) as engine:  # its turns still count; its state is {}
        ctx = await engine.tick_once()
    assert ctx.turn_results
    assert {r[0] for r in _rows(small_world / "world.db", "SELECT state FROM minds")} == {"{}"}


async def test_the_event_log_is_reconciled_after_losing_its_tail(
    scripted, make_engine, small_world: Path
) -> None:
    async with make_engine(scripted()) as engine:
        await engine.tick_once()
        await engine.tick_once()
    log = small_world / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    assert len(lines) > 3
    log.write_text("".join(lines[:2]) + lines[2][:7])  # a crash mid-append
    async with make_engine(scripted()):
        pass
    assert log.read_text() == "".join(lines)


async def test_concurrent_clusters_with_a_slow_mind_still_commit_whole_turns(
    scripted, make_engine, small_world: Path
) -> None:
    mind = scripted(lambda s: [("walk", {"direction": "south"}), ("examine", {})],
                        rounds=2, delay=0.01)
    async with make_engine(mind) as engine:
        ctx = await engine.tick_once()
        live = {a.name: a.position for a in engine.sim.agents.get_all_agents()}
    async with Storage(small_world, create=False, read_only=True) as storage:
        stored = {a.name: a.position for a in await storage.agents.get_all_agents()}
    assert stored == live
    assert all(len(r.actions) == 4 for r in ctx.turn_results.values())


async def test_minds_that_answer_at_once_have_their_tick_written_in_one_transaction(
    scripted, make_engine, small_world: Path
) -> None:
    mind = scripted(lambda s: [("walk", {"direction": "east"})])
    mind.answers_at_once = True
    async with make_engine(mind) as engine:
        before = engine.committer.commits
        ctx = await engine.tick_once()
        assert ctx.completed and engine.committer.commits == before + 1
        opening = [e.event_type for e in ctx.events]
        turns = [e.event_type for n in ctx.turn_results
                 for a in ctx.turn_results[n].actions for e in a.events]
    db = small_world / "world.db"
    assert _rows(db, "SELECT COUNT(*) FROM tick_progress") == [(0,)]
    assert _rows(db, "SELECT tick FROM world_state") == [(1,)]
    kinds = [k for (k,) in _rows(db, "SELECT kind FROM events WHERE tick = 0 ORDER BY seq")]
    assert kinds[:len(opening)] == opening and sorted(kinds[len(opening):]) == sorted(turns)
    assert "agent_moved" in kinds


async def test_a_stop_in_a_tick_of_minds_that_answer_at_once_keeps_the_schedule_to_resume(
    scripted, make_engine, small_world: Path
) -> None:
    first = scripted()
    first.answers_at_once = True
    async with make_engine(first) as engine:
        done = _stop_after_turns(engine, 2)
        ctx = await engine.tick_once()
        assert ctx.stopped and engine.tick == 0
        schedule = [list(c) for c in ctx.clusters]
    db = small_world / "world.db"
    (stored,) = _rows(db, "SELECT tick, schedule FROM tick_progress")
    assert stored[0] == 0 and json.loads(stored[1]) == schedule
    assert sorted(t for (t,) in _rows(db, "SELECT agent FROM turns")) == sorted(done)

    second = scripted()
    second.answers_at_once = True
    async with make_engine(second) as engine:
        everyone = {a.name for a in engine.sim.agents.get_all_agents()}
        ctx = await engine.tick_once()
        assert ctx.resumed and ctx.completed and engine.tick == 1
        assert {s.agent for s in second.starts} == everyone - set(done)


async def test_snapshots_are_written_in_the_background_and_hold_their_tick(
    scripted, make_engine, small_world: Path, config
) -> None:
    storage_settings = config.settings.storage.model_copy(
        update={"snapshot_every_ticks": 2, "snapshots_keep": 2})
    settings = config.settings.model_copy(update={"storage": storage_settings})
    async with make_engine(scripted(), config=dataclasses.replace(config, settings=settings)) \
            as engine:
        for _ in range(6):
            await engine.tick_once()
    snaps = sorted((small_world / "snapshots").glob("snapshot_*.db"))
    # The oldest pruned, but never the world as made (snapshot_0, where forks start)
    assert [p.name for p in snaps] == ["snapshot_0.db", "snapshot_4.db", "snapshot_6.db"]
    for path in snaps:
        tick = int(path.stem.split("_")[1])
        assert _rows(path, "SELECT tick FROM world_state") == [(tick,)]
        assert _rows(path, "SELECT MAX(tick) FROM turns") == [(tick - 1 if tick else None,)]


async def test_a_narrator_that_must_be_awaited_is_awaited(scripted, make_engine) -> None:
    class SlowNarrator:
        def __init__(self) -> None:
            self.asked: list[str] = []

        async def narrate(self, result, ctx) -> str:
            await asyncio.sleep(0)
            self.asked.append(ctx.action)
            return f"told: {ctx.action} {'ok' if result.success else 'no'}"

    narrator = SlowNarrator()
    mind = scripted(lambda s: [("walk", {"direction": "east"})])
    async with make_engine(mind, narrator=narrator) as engine:
        ctx = await engine.tick_once()
    assert narrator.asked and set(narrator.asked) == {"walk"}
    for result in ctx.turn_results.values():
        assert [a.narration for a in result.actions] in (["told: walk ok"], ["told: walk no"])


async def test_whether_all_answer_at_once_asks_each_agents_own_mind(
    scripted, make_engine
) -> None:
    quick, slow = scripted(), scripted()
    quick.answers_at_once = True
    async with make_engine(quick) as engine:
        names = [a.name for a in engine.sim.agents.get_all_agents()]
        assert engine.all_answer_at_once(names)
        assert engine.all_answer_at_once(iter(names))
        engine.minds[names[-1]] = slow  # one agent speaks through a mind that waits
        assert not engine.all_answer_at_once(names)
        assert engine.all_answer_at_once(names[:-1])
        assert engine.all_answer_at_once([])
    async with make_engine(slow) as engine:
        names = [a.name for a in engine.sim.agents.get_all_agents()]
        assert not engine.all_answer_at_once(iter(names))
        assert engine.all_answer_at_once(iter([]))  # nobody to wait for
        engine.minds.update({n: quick for n in names})
        assert engine.all_answer_at_once(names)


async def test_a_stop_asked_between_ticks_begins_no_new_tick(
    scripted, make_engine, small_world: Path
) -> None:
    """Ctrl+C or the observer's q before a tick starts: nothing of the next tick is
    committed, so the next run has no half-begun tick to take up."""
    async with make_engine(scripted()) as engine:
        await engine.tick_once()
        engine.request_stop()
        ctx = await engine.tick_once()
        assert ctx.stopped and not ctx.completed and not ctx.phase_ms
        assert engine.tick == 1
    db = small_world / "world.db"
    assert _rows(db, "SELECT COUNT(*) FROM tick_progress") == [(0,)]
    assert _rows(db, "SELECT COUNT(*) FROM turns WHERE tick = 1") == [(0,)]


async def test_a_tick_begun_with_no_turn_run_is_not_called_interrupted(
    scripted, make_engine, small_world: Path, config
) -> None:
    """A stop that comes during a tick's opening phases leaves the tick begun (its
    opening committed) with no turn run: --status says so without alarm."""
    from services.status import world_status
    from services.status_command import format_status

    async with make_engine(scripted()) as engine:
        engine.request_stop()  # as if it came while the opening phases ran
        ctx = await engine._tick()
        assert ctx.stopped and engine.tick == 0
    async with Storage(small_world, create=False) as storage:
        status = await world_status(storage)
    assert status.unfinished_tick == 0 and status.unfinished_turns == 0
    text = format_status(status)
    assert "interrupted" not in text
    assert "tick 0 was begun and none of its turns has run yet" in text


def _events_by_seq(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize("damage", [
    "torn in the middle", "garbage line", "line doubled", "line lost", "first line torn",
])
async def test_a_line_damaged_anywhere_in_the_event_log_is_repaired_from_the_database(
    scripted, make_engine, small_world: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    """events.jsonl is rebuilt from the events table (the truth) when a line in the
    middle is damaged; the damaged file is kept beside it, never deleted."""
    async with make_engine(scripted()) as engine:
        await engine.tick_once()
        await engine.tick_once()
    log = small_world / "events.jsonl"
    good = log.read_text()
    lines = good.splitlines(keepends=True)
    assert len(lines) > 5
    if damage == "torn in the middle":  # a crash mid-append, then more appends
        lines[2] = lines[2][:9]
    elif damage == "garbage line":
        lines[3] = "\x00\x00\x00 not json\n"
    elif damage == "line doubled":
        lines.insert(3, lines[2])
    elif damage == "line lost":
        del lines[3]
    else:
        lines[0] = lines[0][:5] + "\n"
    damaged = "".join(lines)
    log.write_text(damaged)
    with caplog.at_level("WARNING", logger="hearth.storage"):
        async with make_engine(scripted()):
            pass
    assert _events_by_seq(log) == [json.loads(line) for line in good.splitlines()]
    kept = list(small_world.glob("events.damaged.*.jsonl"))
    assert len(kept) == 1 and kept[0].read_text() == damaged
    assert not list(small_world.glob("*.rebuilding"))
    said = [r for r in caplog.records if "damaged" in r.getMessage()]
    assert len(said) == 1 and kept[0].name in said[0].getMessage()


async def test_a_whole_event_log_is_left_as_it_is(
    scripted, make_engine, small_world: Path
) -> None:
    async with make_engine(scripted()) as engine:
        await engine.tick_once()
    log = small_world / "events.jsonl"
    before = log.read_text()
    async with make_engine(scripted()):
        pass
    assert log.read_text() == before
    assert not list(small_world.glob("events.damaged.*"))
