"""Snapshot tests of the observer's main and help screens on a fixed-seed world.

The SVGs under __snapshots__/ are what the screens looked like when last approved;
after a deliberate change, review and update them with `--snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import EngineRunner, HearthEngine
from observe.api import ObserverAPI
from observe.tui.app import HearthApp
from services.world_setup import create_world
from storage import Storage
from storage.history import HistoryReader

SEED = 4242
SIZE = (140, 44)


@pytest.fixture
def still_world(tmp_path: Path, config, scripted):
    """An observer over a fresh fixed-seed world that is not running: every run of
    the test sees the same screen."""
    data = tmp_path / "data"

    async def write() -> None:
        async with Storage(data) as storage:
            await create_world(storage, config, seed=SEED, size=(64, 48), agent_count=4)

    asyncio.run(write())

    async def make() -> HearthEngine:
        engine = HearthEngine(Storage(data), config, mind=scripted())
        await engine.initialize()
        return engine

    api = ObserverAPI(EngineRunner(make), history=HistoryReader(data / "world.db"))
    api.start()
    yield api
    api.stop(10)
    api.history.close()


def test_main_screen(still_world, snap_compare) -> None:
    assert snap_compare(HearthApp(still_world), terminal_size=SIZE)


def test_help_screen(still_world, snap_compare) -> None:
    assert snap_compare(HearthApp(still_world), press=["question_mark"], terminal_size=SIZE)
