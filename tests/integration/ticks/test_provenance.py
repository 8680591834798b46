"""Provenance (issue 29): a stored turn read back for each kind of mind, and the
observer's `p` screen over the live world and a past tick.

Records are real: the real engine runs a tick with each mind (offline in-process,
Claude through the strict Messages stand-in with a price meter, a local model
through tests/fake_openai.py), and the reader reads them from world.db.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_models import check_models
from adapters.offline_mind import OfflineMind
from adapters.openai_mind import OpenAIMind, OpenAIProfile
from core.spend import Price
from observe.provenance import Provenance
from observe.tui.provenance_screen import ProvenanceScreen
from observe.tui.widgets.feed import EventFeed
from services.budget import Budgets, SpendMeter
from storage import Storage
from storage.history import HistoryReader
from tests.fake_openai import ScriptedApi, reply, tool_call
from tests.integration.ticks.test_tui_app import SIZE, _until, _watching
from tests.messages_standin import StrictMessagesApi

SONNET = "claude-sonnet-5-5"
TODAY = datetime.date(2026, 11, 26)


async def _agents(world: Path) -> list:
    async with Storage(world, create=False, read_only=True) as storage:
        return await storage.agents.get_all_agents()


def _local_model(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "user":  # a perception: act
        return reply("I shall head north.", calls=[tool_call("walk", direction="north")])
    return reply("Enough for now.")


async def _local_mind(world: Path) -> OpenAIMind:
    profiles = {a.name: OpenAIProfile("local-test", a.personality) for a in await _agents(world)}
    return OpenAIMind(ScriptedApi(otherwise=_local_model).client(), profiles)


def _read(world: Path, tick: int) -> dict[str, Provenance]:
    with HistoryReader(world / "world.db") as history:
        names = [a for (a,) in history._query("SELECT agent FROM turns WHERE tick = ?", (tick,))]
        return {name: Provenance.of(history.turn(tick, name)) for name in names}


async def test_an_offline_turn_says_what_it_does_not_record(make_engine, small_world) -> None:
    people = await _agents(small_world)
    mind = OfflineMind(4242, {a.name: a.personality for a in people})
    async with make_engine(mind) as engine:
        tick = engine.tick
        await engine.tick_once()
    found = _read(small_world, tick)
    assert found
    for turn in found.values():
        assert turn.mind == "offline" and turn.tick == tick
        assert turn.perception is None and turn.replies == () and turn.thinking == ()
        assert turn.tokens is None and turn.cost is None
        assert any("records no perception" in n and "reply text" in n for n in turn.notes)
    acted = [t for t in found.values() if t.actions]
    assert acted and all(a.narration and a.tool for t in acted for a in t.actions)
    with HistoryReader(small_world / "world.db") as history:
        assert history.turn(tick, "Nobody") is None


async def test_a_claude_turn_has_perception_reply_calls_tokens_and_cost(
    make_engine, small_world
) -> None:
    api = StrictMessagesApi()
    client = api.client()
    names = [a.name for a in await _agents(small_world)]
    lineup = await check_models(client, {SONNET: names}, TODAY)
    meter = SpendMeter({SONNET: Price(3.0, 15.0, 3.75, 0.3)}, Budgets(), 24)
    profiles = {n: ClaudeProfile(SONNET, "Curious.", "low") for n in names}
    async with make_engine(ClaudeMind(client, profiles, lineup=lineup, meter=meter)) as engine:
        tick = engine.tick
        await engine.tick_once()
    assert api.refused == []
    found = _read(small_world, tick)
    assert set(found) == set(names)
    for turn in found.values():
        assert turn.mind == "claude" and turn.model == SONNET
        assert turn.perception and "You are at (" in turn.perception
        assert turn.replies  # the stand-in says what it will do
        assert turn.actions and turn.actions[0].narration
        assert turn.tokens and turn.tokens.get("output", 0) > 0
        assert turn.cost is not None and turn.cost > 0
        if any(a.tool == "walk" and a.ok for a in turn.actions):
            assert any(c.startswith("agent_moved") for c in turn.changes)


async def test_a_local_turn_has_perception_reply_calls_and_tokens_but_no_cost(
    make_engine, small_world
) -> None:
    async with make_engine(await _local_mind(small_world)) as engine:
        tick = engine.tick
        await engine.tick_once()
    found = _read(small_world, tick)
    assert found
    for turn in found.values():
        assert turn.mind == "local" and turn.model == "local-test"
        assert turn.perception and "You are at (" in turn.perception
        assert turn.replies == ("I shall head north.", "Enough for now.")
        assert [(a.tool, a.args) for a in turn.actions] == [("walk", '{"direction": "north"}')]
        assert turn.tokens == {"prompt_tokens": 200, "completion_tokens": 40}
        assert turn.cost is None and "A local model records no cost." in turn.notes
        assert any(c.startswith("agent_moved") for c in turn.changes)


def _screen_text(app) -> str:
    screen = app.screen
    assert isinstance(screen, ProvenanceScreen), screen
    return screen.text.plain


async def test_p_shows_the_stored_turn_of_a_feed_line_live_and_in_the_past(
    small_world, config
) -> None:
    async with _watching(small_world, config, await _local_mind(small_world)) as (api, app):
        async with app.run_test(size=SIZE) as pilot:
            api.run(3)
            await _until(lambda: app.ticks_seen == 3)
            await pilot.pause()
            # The chosen agent's newest line (an agent is chosen from the start).
            newest = [line for line in app.query_one(EventFeed).shown
                      if line.agent == app.selected][-1]
            with HistoryReader(small_world / "world.db") as history:
                await _until(lambda: history.turn(newest.tick, newest.agent) is not None)
            # Live: p opens the newest feed line's turn.
            await pilot.press("p")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ProvenanceScreen)
            assert screen.turns[screen.index] == (newest.tick, newest.agent)
            text = _screen_text(app)
            assert "Perceived" in text and "You are at (" in text
            assert 'walk {"direction": "north"}' in text
            assert newest.text.split()[0] in text and "I shall head north." in text
            assert "prompt_tokens 200" in text and "A local model records no cost." in text
            await pilot.press("left")  # the previous line's turn
            await pilot.pause()
            assert screen.turns[screen.index] != (newest.tick, newest.agent)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ProvenanceScreen)
            # The past: look back a tick, and p opens that tick's turn.
            await pilot.press("left_square_bracket", "left_square_bracket")
            await pilot.pause()
            past = app.timeline.viewing
            past_line = [line for line in app.query_one(EventFeed).shown
                         if line.agent == app.selected][-1]
            assert past is not None and past < newest.tick
            await pilot.press("p")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ProvenanceScreen)
            tick, agent = screen.turns[screen.index]
            assert tick == past
            text = _screen_text(app)
            assert f"{agent} at tick {past}" in text and "You are at (" in text
            assert agent == past_line.agent
            assert 'walk {"direction": "north"}' in text and past_line.text in text
            await pilot.press("escape", "q")
