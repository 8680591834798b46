"""Adding a tool is one module and one registration line (issue 31): the registry is the
only door, so a tool registered there is offered to every mind, run, narrated and
recorded without the engine, the minds or the narrator knowing its name.

The new tool here, `hum`, is what a tool module holds (a `Tool` and its handler); the
one registration line is `TOOLS.with_tools(HUM)` (in adapters/tools/__init__.py it
would be a line in `TOOLS`). Everything else is real: the engine, the small world's
SQLite file, Claude's mind through the real SDK against the strict Messages API
stand-in, a local model's mind through the real OpenAI SDK, the offline mind.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_models import check_models
from adapters.offline_mind import OfflineMind
from adapters.openai_mind import OpenAIMind, OpenAIProfile
from adapters.tools import TOOLS, Narration, Tool, ToolUse
from core.actions import ActionResult
from observe.provenance import Provenance
from services.tool_input import ToolInputError
from storage import Storage
from storage.history import HistoryReader
from tests.fake_openai import ScriptedApi, reply, tool_call
from tests.messages_standin import Plan, Request, StrictMessagesApi, simple_agent

SONNET = "claude-sonnet-5-5"
TODAY = datetime.date(2026, 11, 26)

# ---------------------------------------------------------------- the new tool's module

HUMMED: list[tuple[str, int, str]] = []


def _parse_hum(arguments: Any) -> str:
    tune = arguments.get("tune") if isinstance(arguments, Mapping) else None
    if not isinstance(tune, str) or not tune.strip():
        raise ToolInputError("hum needs a tune, as text")
    return tune


async def _hum(use: ToolUse, agent: str, tick: int, tune: str) -> ActionResult:
    HUMMED.append((agent, tick, tune))
    return ActionResult.ok(f"you hum {tune} under your breath", (), {"tune": tune})


HUM = Tool(
    "hum", "Hum a tune to yourself. It changes nothing in the world.",
    {"type": "object", "properties": {"tune": {"type": "string", "description": "Which tune."}},
     "required": ["tune"]},
    _parse_hum, _hum,
)

# ---------------------------------------------------------------- the one registration line

WITH_HUM = TOOLS.with_tools(HUM)

# ---------------------------------------------------------------- the minds


async def _names(world: Path) -> list[str]:
    async with Storage(world, create=False, read_only=True) as storage:
        return [a.name for a in await storage.agents.get_all_agents()]


def _stored(world: Path, tick: int) -> dict[str, Provenance]:
    with HistoryReader(world / "world.db") as history:
        names = [a for (a,) in history._query("SELECT agent FROM turns WHERE tick = ?", (tick,))]
        return {name: Provenance.of(history.turn(tick, name)) for name in names}


def _hums_then_stops(request: Request) -> Plan:
    if request.tools and request.fresh:  # a perception: hum
        return Plan(0, "A tune comes to mind.", [("hum", {"tune": "an old song"})])
    return simple_agent(request)


def _framed(told: str) -> bool:
    """The narrator's framing around the handler's words, not the words alone."""
    message = "you hum an old song under your breath"
    return message in told and told != message


async def test_a_registered_tool_is_offered_to_claude_run_narrated_and_recorded(
    make_engine, small_world: Path,
) -> None:
    HUMMED.clear()
    api = StrictMessagesApi(behaviour=_hums_then_stops)
    client = api.client()
    names = await _names(small_world)
    lineup = await check_models(client, {SONNET: names}, TODAY)
    profiles = {n: ClaudeProfile(SONNET, "Curious.", "low") for n in names}
    async with make_engine(ClaudeMind(client, profiles, lineup=lineup), tools=WITH_HUM) as engine:
        tick = engine.tick
        await engine.tick_once()
    assert api.refused == []
    turns = [s for s in api.served if s.body.get("tools")]
    assert turns
    for served in turns:  # offered, as declared, in every request of every agent
        offered = {t["name"]: t for t in served.body["tools"]}
        assert offered["hum"]["description"] == HUM.description
        assert offered["hum"]["input_schema"] == HUM.input_schema
        assert set(offered) == {t.name for t in WITH_HUM}
    assert sorted(agent for agent, _, _ in HUMMED) == sorted(names)  # run, once each
    told_to_claude = [b["content"] for s in turns for m in s.body["messages"]
                      if m["role"] == "user" and isinstance(m["content"], list)
                      for b in m["content"] if b.get("type") == "tool_result"]
    assert told_to_claude and all(_framed(json.dumps(t)) for t in told_to_claude)
    stored = _stored(small_world, tick)
    assert set(stored) == set(names)
    for turn in stored.values():  # recorded: the call, its outcome and its narration
        (hum,) = [a for a in turn.actions if a.tool == "hum"]
        assert hum.ok and json.loads(hum.args) == {"tune": "an old song"}
        assert _framed(hum.narration)


async def test_a_registered_tool_is_offered_to_a_local_model_and_the_offline_mind(
    make_engine, small_world: Path,
) -> None:
    HUMMED.clear()

    def local(body: dict[str, Any]) -> dict[str, Any]:
        if body["messages"][-1]["role"] == "user":
            return reply("Humming.", calls=[tool_call("hum", tune="an old song")])
        return reply("Enough.")

    api = ScriptedApi(otherwise=local)
    names = await _names(small_world)
    profiles = {n: OpenAIProfile("local-test", "Curious.") for n in names}
    async with make_engine(OpenAIMind(api.client(), profiles), tools=WITH_HUM) as engine:
        tick = engine.tick
        await engine.tick_once()
    for body in api.requests:
        functions = {t["function"]["name"]: t["function"] for t in body["tools"]}
        assert functions["hum"]["description"] == HUM.description
        assert functions["hum"]["parameters"] == HUM.input_schema
    assert sorted(agent for agent, _, _ in HUMMED) == sorted(names)
    for turn in _stored(small_world, tick).values():
        (hum,) = [a for a in turn.actions if a.tool == "hum"]
        assert hum.ok and _framed(hum.narration)

    seen = []
    async with Storage(small_world, create=False, read_only=True) as storage:
        state = await storage.world.get_world_state()
        people = {a.name: a.personality for a in await storage.agents.get_all_agents()}
    offline = OfflineMind(state.seed, people)
    begin = offline.begin
    offline.begin = lambda start: (seen.append(start), begin(start))[1]  # type: ignore[method-assign]
    async with make_engine(offline, tools=WITH_HUM) as engine:
        await engine.tick_once()
    assert seen and all("hum" in {t.name for t in start.tools} for start in seen)


async def test_a_tool_told_as_it_is_skips_the_narrator_and_bad_input_is_a_failed_call(
    make_engine, scripted, small_world: Path,
) -> None:
    plain = Tool("hum_plainly", HUM.description, HUM.input_schema, _parse_hum, _hum,
                 Narration.AS_IS)
    mind = scripted(lambda start: [("hum_plainly", {"tune": "a round"}), ("hum", {"tune": 7}),
                                   ("whistle", {})])
    async with make_engine(mind, tools=TOOLS.with_tools(HUM, plain)) as engine:
        tick = engine.tick
        await engine.tick_once()
    for turn in _stored(small_world, tick).values():
        plainly, bad, unknown = turn.actions
        assert plainly.ok and plainly.narration == "you hum a round under your breath"
        assert not bad.ok and "hum needs a tune, as text" in bad.narration
        assert not unknown.ok and "there is no tool called 'whistle'" in unknown.narration
        assert "hum, hum_plainly" in unknown.narration and "recall" in unknown.narration
