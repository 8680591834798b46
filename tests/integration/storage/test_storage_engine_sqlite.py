"""The engine's records on a real file: events, turns, minds, tick progress, metrics."""

from __future__ import annotations

from core.agent import Agent, Inventory
from core.objects import Item
from core.types import AgentName, Position
from storage import Storage
from storage.repositories.engine import EventRow, MindRow, TickMetrics, TurnRow


async def test_events_keep_commit_order_and_read_back_after_a_seq(storage, reopen) -> None:
    rows = [EventRow(3, "Ash", "agent_moved", f'{{"n":{i}}}') for i in range(5)]
    await storage.engine.add_events(rows[:2])
    await storage.engine.add_events(rows[2:])
    async with reopen() as other:
        assert await other.engine.last_event_seq() == 5
        after = await other.engine.events_after(2)
        assert [seq for seq, _ in after] == [3, 4, 5]
        assert [data["n"] for _, data in after] == [2, 3, 4]
        assert await other.engine.event_kinds() == {"agent_moved": 5}


async def test_turns_done_names_exactly_the_agents_committed_for_that_tick(storage, reopen) -> None:
    await storage.engine.save_turns([
        TurnRow(7, "Ash", "offline", 2, "ended", "{}"),
        TurnRow(7, "Birch", "offline", 0, "ended", "{}"),
        TurnRow(8, "Ash", "offline", 1, "action_limit", '{"a":1}'),
    ])
    async with reopen() as other:
        assert await other.engine.turns_done(7) == {"Ash", "Birch"}
        assert await other.engine.turns_done(8) == {"Ash"}
        assert await other.engine.turns_done(9) == set()
        newest = await other.engine.turns_of("Ash")
        assert [t.tick for t in newest] == [8, 7] and newest[0].ended == "action_limit"


async def test_mind_state_is_replaced_not_duplicated(storage, reopen) -> None:
    await storage.engine.save_minds([MindRow("Ash", "offline", '{"v":1}', 1)])
    await storage.engine.save_minds([MindRow("Ash", "offline", '{"v":2}', 2)])
    async with reopen() as other:
        minds = await other.engine.get_minds()
        assert list(minds) == ["Ash"] and minds["Ash"].state == '{"v":2}'
        assert minds["Ash"].tick == 2


async def test_progress_round_trips_its_schedule_and_clears(storage, reopen) -> None:
    assert await storage.engine.get_progress() is None
    await storage.engine.set_progress(12, [["Ash", "Birch"], ["Cedar"]])
    async with reopen() as other:
        progress = await other.engine.get_progress()
        assert progress is not None and progress.tick == 12
        assert progress.schedule == (("Ash", "Birch"), ("Cedar",))
    await storage.engine.clear_progress()
    assert await storage.engine.get_progress() is None


async def test_metrics_keep_phase_order(storage, reopen) -> None:
    phases = {"wake": 0.1, "schedule": 0.3, "turns": 5.0, "commit": 1.2}
    await storage.engine.add_metrics(TickMetrics(1, "t", 6.6, 3, 5, phases))
    await storage.engine.add_metrics(TickMetrics(2, "t", 7.0, 3, 4, phases))
    async with reopen() as other:
        got = await other.engine.recent_metrics(10)
        assert [m.tick for m in got] == [1, 2]
        assert list(got[0].phases) == ["wake", "schedule", "turns", "commit"]
        assert got[1].actions == 4


async def test_save_agents_in_bulk_equals_saving_one_by_one(storage: Storage, reopen) -> None:
    a = Agent(AgentName("Ash"), "m", "p", Position(1, 2),
              Inventory({"wood": 3, "stone": 1}, (Item("i1", "axe", ("sharp",)),)))
    b = Agent(AgentName("Birch"), "m", "q", Position(4, 4), Inventory({"clay": 2}))
    await storage.agents.save_agents([a, b])
    # Saving again with a smaller inventory must drop what is gone.
    await storage.agents.save_agents([a.with_inventory(Inventory({"wood": 1}))])
    async with reopen() as other:
        got = {x.name: x for x in await other.agents.get_all_agents()}
        assert got["Ash"].inventory == Inventory({"wood": 1})
        assert got["Birch"] == b
