"""A real small world on disk, and scripted minds to drive the engine with.

The minds here are test doubles of the `Mind` port (the engine's edge), not of
anything under test: the engine, the ActionEngine, the narrator, the perception
builder and SQLite are all real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from config import HearthConfig, load_config
from core.types import AgentName
from engine import HearthEngine
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_setup import create_world
from storage import Storage

SEED = 4242


class ScriptedTurn:
    def __init__(self, mind: ScriptedMind, start: TurnStart) -> None:
        self.mind, self.start = mind, start
        self.heard: list[ToolOutcome] = []
        self._asked = 0

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self.heard += outcomes
        if self.mind.delay:
            await asyncio.sleep(self.mind.delay)
        if self.mind.fail_for and self.start.agent in self.mind.fail_for:
            raise RuntimeError(f"scripted failure for {self.start.agent}")
        self._asked += 1
        if self._asked > self.mind.rounds:
            return []
        return [ToolCall(f"c{self._asked}-{i}", name, args)
                for i, (name, args) in enumerate(self.mind.script(self.start))]

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        self.heard += outcomes
        self.mind.finished.append((self.start.agent, self.start.tick, reason))

    def record(self) -> Mapping[str, Any]:
        return {"heard": len(self.heard)}


class ScriptedMind(MindDefaults):
    """Calls `script(start)` each round, for `rounds` rounds; counts turns per agent."""

    kind = "scripted"
    reads_text = True

    def __init__(
        self,
        script: Callable[[TurnStart], list[tuple[str, dict]]] | None = None,
        *,
        rounds: int = 1,
        delay: float = 0.0,
        fail_for: frozenset[str] = frozenset(),
    ) -> None:
        self.script = script or (lambda start: [("walk", {"direction": "north"})])
        self.rounds, self.delay, self.fail_for = rounds, delay, fail_for
        self.turns: dict[str, int] = {}
        self.finished: list[tuple[str, int, str]] = []
        self.starts: list[TurnStart] = []

    def begin(self, start: TurnStart) -> ScriptedTurn:
        self.turns[start.agent] = self.turns.get(start.agent, 0) + 1
        self.starts.append(start)
        return ScriptedTurn(self, start)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {"turns": self.turns.get(agent, 0)}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self.turns[agent] = int(state.get("turns", 0))


@pytest.fixture(scope="session")
def config() -> HearthConfig:
    return load_config(None)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def small_world(data_dir: Path, config: HearthConfig) -> Path:
    """A 64x48 world with four agents, written to data_dir."""
    async with Storage(data_dir) as storage:
        await create_world(storage, config, seed=SEED, size=(64, 48), agent_count=4)
    return data_dir


@pytest.fixture
def make_engine(small_world: Path, config: HearthConfig, tmp_path: Path):
    """`async with make_engine(mind) as engine:` an initialised engine on the small world."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def make(mind, *, config: HearthConfig = config, **kwargs):
        storage = Storage(small_world)
        engine = await HearthEngine.open(storage, config, mind=mind, agents_dir=tmp_path / "agents",
                              **kwargs)
        try:
            yield engine
        finally:
            await engine.close()
            await storage.close()

    return make


@pytest.fixture
def scripted() -> type[ScriptedMind]:
    """The ScriptedMind class (fixtures are how test modules reach conftest code here)."""
    return ScriptedMind
