"""Snapshot tests of the observer's main and help screens on a fixed-seed world.

The SVGs under __snapshots__/ are what the screens looked like when last approved;
after a deliberate change, review and update them with `--snapshot-update`.
"""

from __future__ import annotations

import asyncio
import html
import re
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
SNAPSHOTS = Path(__file__).parent / "__snapshots__" / Path(__file__).stem


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
        engine = await HearthEngine.open(Storage(data), config, mind=scripted())
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


def _svg_text(svg: Path) -> str:
    """The words of a screenshot SVG, in the order drawn (spaces as spaces)."""
    words = re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text(encoding="utf-8"))
    return html.unescape("".join(words)).replace("\xa0", " ")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_header_run_state_and_footer_help_and_quit(still_world, snap_compare, request,
                                                   size) -> None:
    """Issue 29: at the smallest terminal and a large one, the header keeps its run
    state and spend, and the footer its help and quit keys (both were cut at 80x24)."""
    assert snap_compare(HearthApp(still_world), terminal_size=size)
    svg = SNAPSHOTS / f"{request.node.name}.svg"
    words = _svg_text(svg)
    for part in ("t0", "paused", "$0.00", "? Help", "q Quit"):
        assert part in words, (part, svg)
