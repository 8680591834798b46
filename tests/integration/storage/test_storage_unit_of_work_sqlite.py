"""Units of work on a real world.db: nothing sticks unless committed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

import pytest

from core.agent import Agent, Inventory
from core.objects import Item, Sign
from core.types import AgentName, Position
from core.world import WorldState
from storage import Storage, StorageError


def _agent(name: str, x: int = 0, item_id: str | None = None) -> Agent:
    items = () if item_id is None else (Item(item_id, "cup"),)
    return Agent(AgentName(name), "model", "p", Position(x, 0), Inventory({"wood": 2}, items))


async def _names(storage: Storage) -> list[str]:
    return [a.name for a in await storage.agents.get_all_agents()]


async def _names_on_disk(reopen: Callable[..., Storage]) -> list[str]:
    """What a brand-new connection sees: only what reached the file committed."""
    async with reopen(create=False) as other:
        return await _names(other)


class Boom(Exception):
    pass


async def test_uncommitted_changes_are_absent_afterwards(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.world.save_world_state(WorldState(10, 10, 1))
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        await uow.world.save_world_state(WorldState(10, 10, 1, tick=5))
        await uow.objects.save_object(Sign("s", Position(1, 1), None, 0, "hi"))
        # The unit sees its own writes while it is open.
        assert await uow.agents.get_agent("Ash") == _agent("Ash")

    assert await _names(storage) == []
    assert (await storage.world.get_world_state()) == WorldState(10, 10, 1)
    assert await storage.objects.count_objects() == 0
    (stacks,) = await storage.db.fetchone("SELECT COUNT(*) FROM inventory_stacks")
    assert stacks == 0
    assert await _names_on_disk(reopen) == []
    async with reopen() as other:
        assert await other.world.get_world_state() == WorldState(10, 10, 1)


async def test_committed_changes_persist(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash", item_id="cup-1"))
        await uow.world.save_world_state(WorldState(8, 8, 2, tick=3))
        await uow.commit()
        assert uow.commits == 1

    assert await _names(storage) == ["Ash"]
    async with reopen() as other:
        assert await other.agents.get_agent("Ash") == _agent("Ash", item_id="cup-1")
        assert await other.world.get_world_state() == WorldState(8, 8, 2, tick=3)


async def test_an_exception_rolls_back_and_propagates(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.agents.save_agent(_agent("Keep"))
    with pytest.raises(Boom):
        async with storage.unit_of_work() as uow:
            await uow.agents.save_agent(_agent("Ash"))
            await uow.agents.delete_agent(AgentName("Keep"))
            raise Boom

    assert await _names(storage) == ["Keep"]
    assert await _names_on_disk(reopen) == ["Keep"]
    # The lock was released: a later write goes through.
    await asyncio.wait_for(storage.agents.save_agent(_agent("Later")), timeout=5)
    assert await _names_on_disk(reopen) == ["Keep", "Later"]


async def test_writes_after_a_commit_are_rolled_back_unless_committed_again(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        await uow.commit()
        await uow.agents.save_agent(_agent("Birch"))
        await uow.agents.save_agent(_agent("Ash", x=99))

    assert await _names(storage) == ["Ash"]
    assert (await storage.agents.get_agent("Ash")) == _agent("Ash")
    assert await _names_on_disk(reopen) == ["Ash"]

    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Birch"))
        await uow.commit()
        await uow.agents.save_agent(_agent("Cedar"))
        await uow.commit()
        assert uow.commits == 2
    assert await _names_on_disk(reopen) == ["Ash", "Birch", "Cedar"]


async def test_rollback_discards_and_the_unit_stays_usable(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        await uow.commit()
        await uow.agents.save_agent(_agent("Birch"))
        await uow.agents.delete_agent(AgentName("Ash"))
        await uow.rollback()
        assert await _names(storage) == ["Ash"]
        await uow.agents.save_agent(_agent("Cedar"))
        await uow.commit()

    assert await _names(storage) == ["Ash", "Cedar"]
    assert await _names_on_disk(reopen) == ["Ash", "Cedar"]


async def test_a_failing_repository_call_inside_a_unit_undoes_only_itself(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    """Repository writes are savepoints inside the unit: all-or-nothing on their own."""
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash", item_id="cup-1"))
        birch = _agent("Birch", x=4)
        await uow.agents.save_agent(birch)
        # Same unique item id as Ash's cup: the inventory insert fails.
        with pytest.raises(sqlite3.IntegrityError):
            await uow.agents.save_agent(_agent("Birch", x=7, item_id="cup-1"))
        with pytest.raises(sqlite3.IntegrityError):
            await uow.agents.save_agent(_agent("Cedar", item_id="cup-1"))
        # Neither the moved Birch nor Cedar's agent row survived their failed call.
        assert await uow.agents.get_agent("Birch") == birch
        assert await uow.agents.get_agent("Cedar") is None
        await uow.commit()

    assert await _names_on_disk(reopen) == ["Ash", "Birch"]
    async with reopen() as other:
        assert await other.agents.get_agent("Birch") == birch


async def test_a_unit_without_savepoints_is_undone_whole_by_a_failure(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    """The group commit's kind of unit: no savepoint per call, all or nothing."""
    with pytest.raises(sqlite3.IntegrityError):
        async with storage.unit_of_work(savepoints=False) as uow:
            await uow.agents.save_agents([_agent("Ash", item_id="cup-1")])
            await uow.agents.save_agents([_agent("Birch", item_id="cup-1")])
            await uow.commit()
    assert await _names_on_disk(reopen) == []

    async with storage.unit_of_work(savepoints=False) as uow:  # and it still works
        await uow.agents.save_agents([_agent("Ash", item_id="cup-1")])
        await uow.commit()
    assert await _names_on_disk(reopen) == ["Ash"]
    # An ordinary unit afterwards has its savepoints back.
    async with storage.unit_of_work() as uow:
        with pytest.raises(sqlite3.IntegrityError):
            await uow.agents.save_agent(_agent("Cedar", item_id="cup-1"))
        await uow.agents.save_agent(_agent("Dune", x=3))
        await uow.commit()
    assert await _names_on_disk(reopen) == ["Ash", "Dune"]


async def test_repository_calls_in_a_unit_roll_back_with_it(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    await storage.agents.save_agent(_agent("Ash", item_id="cup-1"))
    with pytest.raises(Boom):
        async with storage.unit_of_work():
            # Calls on storage.* (not uow.*) in the same task join the unit too.
            await storage.agents.save_agent(_agent("Ash", x=5))
            await storage.objects.save_object(Sign("s", Position(1, 1), None, 0, "hi"))
            raise Boom

    assert await storage.agents.get_agent("Ash") == _agent("Ash", item_id="cup-1")
    assert await storage.objects.count_objects() == 0
    async with reopen() as other:
        assert await other.agents.get_agent("Ash") == _agent("Ash", item_id="cup-1")


async def test_a_second_unit_in_the_same_task_is_refused(storage: Storage) -> None:
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        with pytest.raises(StorageError):
            async with storage.unit_of_work():
                pass
        await uow.commit()
    assert await _names(storage) == ["Ash"]


async def test_another_task_waits_for_the_unit_and_keeps_its_write(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    unit_open = asyncio.Event()

    async def other_writer() -> None:
        await unit_open.wait()
        await storage.agents.save_agent(_agent("Birch"))

    # Created before the unit, so it is a separate task with its own context.
    task = asyncio.create_task(other_writer())
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        unit_open.set()
        await asyncio.sleep(0.1)
        assert not task.done(), "the other task wrote while the unit held the transaction"
        # Not committed: the unit rolls back on exit.
    await asyncio.wait_for(task, timeout=5)

    assert await _names(storage) == ["Birch"]
    assert await _names_on_disk(reopen) == ["Birch"]


async def test_a_unit_waits_for_another_tasks_unit(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    order: list[str] = []
    first_open = asyncio.Event()

    async def first() -> None:
        async with storage.unit_of_work() as uow:
            first_open.set()
            await uow.agents.save_agent(_agent("Ash"))
            await asyncio.sleep(0.05)
            order.append("first")
            await uow.commit()

    async def second() -> None:
        await first_open.wait()
        async with storage.unit_of_work() as uow:
            order.append("second")
            assert await uow.agents.get_agent("Ash") is not None
            await uow.agents.save_agent(_agent("Birch"))
            await uow.commit()

    await asyncio.wait_for(asyncio.gather(first(), second()), timeout=5)
    assert order == ["first", "second"]
    assert await _names_on_disk(reopen) == ["Ash", "Birch"]


async def test_a_task_spawned_inside_a_unit_does_not_join_it(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    async with storage.unit_of_work() as uow:
        await uow.agents.save_agent(_agent("Ash"))
        task = asyncio.create_task(storage.agents.save_agent(_agent("Birch")))
        await asyncio.sleep(0.1)
        blocked = not task.done()
        # Not committed: the unit rolls back on exit.
    await asyncio.wait_for(task, timeout=5)

    assert await _names_on_disk(reopen) == ["Birch"]
    assert blocked


async def test_a_cancelled_unit_rolls_back_and_releases_the_lock(
    storage: Storage, reopen: Callable[..., Storage]
) -> None:
    written = asyncio.Event()

    async def doomed() -> None:
        async with storage.unit_of_work() as uow:
            await uow.agents.save_agent(_agent("Ash"))
            written.set()
            await asyncio.sleep(60)
            await uow.commit()

    task = asyncio.create_task(doomed())
    await asyncio.wait_for(written.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    await asyncio.wait_for(storage.agents.save_agent(_agent("Birch")), timeout=5)
    assert await _names(storage) == ["Birch"]
    assert await _names_on_disk(reopen) == ["Birch"]
