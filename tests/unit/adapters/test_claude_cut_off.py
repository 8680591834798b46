"""A reply cut off by max_tokens in the middle of a tool call, against the strict stand-in.

https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons: `max_tokens`
means the response reached the limit; a response cut off there may end in an incomplete
tool_use block, which is not a call to run (its input may be half written). And every
tool_use must be answered by a tool_result in the next message (the stand-in's TOOL_USE
rule), so the incomplete block must not go back unanswered either.

Hearth's rule (adapters/claude_mind/turn.py): the cut call is not run and its block is not
sent back; a note after the reply tells the model it was cut off and which call was not
run, and the model is asked once more within the turn. Through the real SDK over
httpx2.MockTransport; the stand-in is the strict one, made to end a cut reply with a
partial tool_use as the API may.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.history import cut_off_note
from adapters.claude_models import check_models
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.tool_specs import tool_specs
from services.turn_loop import ENDED, TurnLog, run_turn
from tests.messages_standin import Plan, Request, StrictMessagesApi

EMBER = AgentName("Ember")
SONNET = "claude-sonnet-5-5"
TODAY = dt.date(2026, 11, 26)
MAX_TOKENS = 200
WORDY = "I think I will walk north now, toward the trees. " * 40
"""Far more than MAX_TOKENS: a reply that says this is cut before its call is finished."""


class CuttingApi(StrictMessagesApi):
    """The strict stand-in, whose cut replies end with the call they were writing, cut
    short: a tool_use block with half its input (the stand-in alone leaves it out)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.cut_ids: list[str] = []

    def _reply(self, request: Request, shape: Any, plan: Plan) -> dict[str, Any]:
        reply = super()._reply(request, shape, plan)
        written = [b for b in reply["content"] if b["type"] == "tool_use"]
        if reply["stop_reason"] == "max_tokens" and len(written) < len(plan.calls):
            name, arguments = plan.calls[len(written)]
            # Half written: the first argument only, its value cut ("north" -> "no").
            partial = {k: str(v)[:2] for k, v in list(arguments.items())[:1]}
            block = {"type": "tool_use", "id": self._id("toolu"), "name": name,
                     "input": partial}
            reply["content"].append(block)
            self.cut_ids.append(block["id"])
        return reply


def perception(tick: int) -> Perception:
    return Perception(
        agent=EMBER, tick=tick, position=Position(5, 5), time_text=f"day 1, tick {tick}",
        period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="· · @ · ·",
        narrative="Grass all around you.", inventory_text="You carry nothing.",
        journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None)


def newest_text(request: Request) -> str:
    blocks = request.last_blocks
    return blocks[-1].get("text", "") if blocks and blocks[-1]["type"] == "text" else ""


def wordy_then_brief(request: Request) -> Plan:
    """Cut off while calling walk on a fresh perception; told so, it calls walk briefly;
    after the result it ends its turn."""
    if request.after_results:
        return Plan(40, "Done for now.")
    if newest_text(request).startswith("(Your last reply was cut off"):
        return Plan(40, "North, then.", [("walk", {"direction": "north"})])
    return Plan(40, WORDY, [("walk", {"direction": "north"})])


def always_wordy(request: Request) -> Plan:
    if request.after_results:
        return Plan(40, "Done for now.")
    return Plan(40, WORDY, [("walk", {"direction": "north"})])


class World:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    async def execute(self, call: ToolCall) -> ActionResult:
        self.calls.append(call)
        return ActionResult.ok(f"you walk {call.arguments.get('direction')}")

    async def narrate(self, result: ActionResult, call: ToolCall) -> str:
        return result.message


async def make_mind(api: StrictMessagesApi) -> ClaudeMind:
    client = api.client()
    lineup = await check_models(client, {SONNET: ["Ember"]}, TODAY)
    return ClaudeMind(client, {"Ember": ClaudeProfile(SONNET, "You are curious.", "medium")},
                      max_tokens=MAX_TOKENS, lineup=lineup)


async def turn(mind: ClaudeMind, world: World, tick: int) -> TurnLog:
    start = TurnStart(EMBER, tick, perception(tick), tool_specs(), 8)
    return await run_turn(mind, start, world.execute, world.narrate)


def sent_ids(body: dict[str, Any]) -> set[str]:
    """Every tool_use and tool_result id a request carries."""
    return {b.get("id") or b.get("tool_use_id") for m in body["messages"] for b in m["content"]
            if b.get("type") in ("tool_use", "tool_result")}


async def test_a_cut_call_is_not_run_and_the_next_request_says_so():
    api = CuttingApi(behaviour=wordy_then_brief)
    mind, world = await make_mind(api), World()
    log = await turn(mind, world, 1)

    assert api.refused == []
    cut = api.served[0]
    assert cut.stop_reason == "max_tokens"
    assert [b["type"] for b in cut.reply["content"]][-1] == "tool_use"
    assert len(api.cut_ids) == 1
    # The cut call was not run; the one made again after the note was.
    assert [c.name for c in world.calls] == ["walk"] and log.ended == ENDED
    assert world.calls[0].id != api.cut_ids[0]
    assert world.calls[0].arguments == {"direction": "north"}
    # The next request was accepted and ends with the note, after the reply without its call.
    after = api.served[1].body
    assert after["messages"][-1]["content"][-1]["text"] == cut_off_note("max_tokens", ["walk"])
    assert "was not run" in after["messages"][-1]["content"][-1]["text"]
    answered = after["messages"][-2]
    assert answered["role"] == "assistant"
    assert [b["type"] for b in answered["content"]] == ["thinking", "text"]
    for served in api.served[1:]:
        assert api.cut_ids[0] not in sent_ids(served.body)
    assert [s.stop_reason for s in api.served] == ["max_tokens", "tool_use", "end_turn"]


async def test_cut_off_twice_the_note_waits_for_the_next_turn_and_is_accepted():
    """Asked once more and cut off again: the turn ends (no third ask), the second note
    stays at the end of the history, and the next turn's first request, the note then the
    perception in one user message, is accepted."""
    api = CuttingApi(behaviour=always_wordy)
    mind, world = await make_mind(api), World()
    log = await turn(mind, world, 1)
    assert world.calls == [] and log.ended == ENDED and log.error is None
    assert [s.stop_reason for s in api.served] == ["max_tokens", "max_tokens"]
    history = mind.get_state(EMBER)["messages"]
    assert history[-1] == {"role": "user", "content": [
        {"type": "text", "text": cut_off_note("max_tokens", ["walk"])}]}

    await turn(mind, world, 2)
    assert api.refused == []
    opening = api.served[2].body["messages"][-1]["content"]
    assert [b["text"] for b in opening] == [cut_off_note("max_tokens", ["walk"]),
                                           perception(2).as_text()]
    for served in api.served:
        assert not set(api.cut_ids) & sent_ids(served.body)


def test_the_note_names_each_call_and_the_cause():
    assert cut_off_note("max_tokens", ["walk"]).count("walk") == 1
    two = cut_off_note("max_tokens", ["walk", "gather"])
    assert "calls to walk, gather were not run" in two
    full = cut_off_note("model_context_window_exceeded", [])
    assert "memory" in full and "not run" in full
