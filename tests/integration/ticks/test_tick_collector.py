"""The engine's hold on Python's cycle collector (engine/garbage.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from engine.garbage import TickCollector


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture(autouse=True)
def _restore_the_collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def _dead_cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_settling_freezes_what_was_loaded() -> None:
    gc.unfreeze()
    TickCollector().settle()
    assert gc.get_freeze_count() > 0


def test_the_collector_is_paused_during_a_tick_and_resumed_after() -> None:
    gc.enable()
    collector = TickCollector(full_every=0)
    collector.tick_started()
    assert not gc.isenabled()
    collector.tick_ended()
    assert gc.isenabled()


def test_a_collector_switched_off_by_someone_else_stays_off() -> None:
    gc.disable()
    collector = TickCollector(full_every=0)
    collector.tick_started()
    collector.tick_ended()
    assert not gc.isenabled()


def test_what_a_tick_keeps_is_frozen_so_it_is_not_walked_again() -> None:
    gc.enable()
    collector = TickCollector(full_every=0)
    collector.tick_started()
    kept = [_Node() for _ in range(100)]
    before = gc.get_freeze_count()
    collector.tick_ended()
    assert gc.get_freeze_count() >= before + len(kept)


def test_a_dead_cycle_is_reclaimed_at_the_next_full_collection() -> None:
    gc.enable()
    collector = TickCollector(full_every=3)
    collector.tick_started()
    ref = _dead_cycle()
    collector.tick_ended()  # tick 1: frozen, not collected
    assert ref() is not None
    for _ in range(2):  # ticks 2 and 3: the third is a full collection
        collector.tick_started()
        collector.tick_ended()
    assert ref() is None


def test_a_tick_that_waits_on_a_model_leaves_the_collector_running() -> None:
    """Issue 40: the collector is process-wide; a tick of model minds lasts minutes, so
    it is neither paused nor made to freeze what the tick keeps alive."""
    gc.enable()
    collector = TickCollector(full_every=1)
    collector.tick_started(pause=False)
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    kept = [_Node() for _ in range(100)]
    collector.tick_ended()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    assert kept


async def test_the_engine_pauses_only_for_minds_that_answer_at_once(
        make_engine, scripted) -> None:
    """A mind that answers at once (the offline one, a replay) has its ticks run with the
    collector paused; one that waits (a model) has it running."""
    seen: dict[bool, list[bool]] = {True: [], False: []}

    for at_once in (True, False):
        class Watching(scripted):
            answers_at_once = at_once

            def begin(self, start):  # noqa: ANN001, ANN202
                seen[self.answers_at_once].append(gc.isenabled())
                return super().begin(start)

        gc.enable()
        async with make_engine(Watching()) as engine:
            assert (await engine.tick_once()).completed
        assert gc.isenabled()
    assert seen[True] and not any(seen[True])
    assert seen[False] and all(seen[False])
