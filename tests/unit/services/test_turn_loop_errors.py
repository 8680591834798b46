"""How the turn loop records a mind that cannot go on: expected trouble in one line, bugs
with their traceback; either way the actions already taken stand."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import MindDefaults, MindError, ToolCall, ToolOutcome, TurnStart
from services.turn_loop import MIND_ERROR, run_turn

EMBER = AgentName("Ember")
SEEN = Perception(
    agent=EMBER, tick=3, position=Position(0, 0), time_text="day 1, 11:00 (morning)",
    period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="@", narrative="",
    inventory_text="", journey_text=None, visible_agents_text="", conversation_text=None,
    invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
    standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
    in_conversation_with=(), pending_invitation_from=None)


class _Turn:
    def __init__(self, trouble: Exception) -> None:
        self.trouble, self.asked = trouble, 0

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self.asked += 1
        if self.asked == 1:
            return [ToolCall("a", "walk", {"direction": "north"})]
        raise self.trouble

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        raise AssertionError("finish is not called after a failure")

    def record(self) -> dict:
        return {"asked": self.asked}


class _Mind(MindDefaults):
    kind = "test"

    def __init__(self, trouble: Exception) -> None:
        self.trouble = trouble

    def begin(self, start: TurnStart) -> _Turn:
        return _Turn(self.trouble)


async def _execute(call: ToolCall) -> ActionResult:
    return ActionResult.ok("you walk north")


async def _narrate(result: ActionResult, call: ToolCall) -> str:
    return result.message


@pytest.mark.parametrize(("trouble", "traceback"), [
    (MindError("the API answered 529: Overloaded"), False),
    (KeyError("a bug"), True),
])
async def test_a_mind_that_cannot_go_on_ends_its_turn_and_keeps_its_actions(
    trouble: Exception, traceback: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "hearth.turns")
    log = await run_turn(_Mind(trouble), TurnStart(EMBER, 3, SEEN, (), 8), _execute, _narrate)
    assert log.ended == MIND_ERROR and [a.tool for a in log.actions] == ["walk"]
    assert log.record == {"asked": 2}
    (entry,) = caplog.records
    assert (entry.exc_info is not None) is traceback
    if not traceback:
        assert log.error == "the API answered 529: Overloaded"
        assert entry.levelno == logging.WARNING and "ended early" in entry.getMessage()
    else:
        assert log.error == "KeyError: 'a bug'"
