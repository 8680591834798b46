"""A turn given back leaves nothing of itself behind in the process (issue 40): the
narrator's spend on it is not booked on the agent's next turn."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from services.mind import TurnNotBegun
from services.narrator import TemplateNarrator


class _Costly(TemplateNarrator):
    """The templates, with a retelling's spend noted per agent as a model narrator does
    (adapters/claude_mind/narrator.py `take_spend`)."""

    def __init__(self) -> None:
        super().__init__()
        self.spent: dict[str, list[str]] = {}

    async def describe(self, agent, tick, perception):  # noqa: ANN001, ANN201
        self.spent.setdefault(agent, []).append(f"scene at tick {tick}")
        return None

    def take_spend(self, agent: str):  # noqa: ANN201
        told = self.spent.pop(agent, None)
        return None if told is None else {"requests": told}


async def test_a_turn_given_back_takes_its_narration_spend_with_it(
        make_engine, scripted, small_world: Path) -> None:
    given_back: set[str] = set()

    class GivesBackOnce(scripted):
        def begin(self, start):  # noqa: ANN001, ANN202
            turn = super().begin(start)
            if start.agent not in given_back:
                given_back.add(start.agent)

                async def not_begun(outcomes):  # noqa: ANN001, ANN202
                    raise TurnNotBegun("stopping before the first request")
                turn.next_calls = not_begun
            return turn

    narrator = _Costly()
    async with make_engine(GivesBackOnce(), narrator=narrator,
                           scene_narrator=narrator) as engine:
        await engine.tick_once()  # every turn given back
        await engine.tick_once()  # every turn taken
    db = sqlite3.connect(small_world / "world.db")
    try:
        rows = db.execute("SELECT tick, record FROM turns").fetchall()
    finally:
        db.close()
    assert rows and {tick for tick, _ in rows} == {1}
    for _, record in rows:
        told = json.loads(record)["narration"]["requests"]
        assert told == ["scene at tick 1"]  # not the given-back turn's of tick 0
