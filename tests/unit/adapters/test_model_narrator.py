"""The small-model narrator: when it speaks, that it keeps every fact, and its safety net."""

from __future__ import annotations

from adapters.claude_mind.narrator import ModelNarrator, keeps_facts
from core.actions import ActionResult
from core.failures import FailureReason
from core.perception import Perception
from core.spend import Price, Usage
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.budget import Budgets, SpendMeter
from services.narrator import NarrationContext, TemplateNarrator
from tests.fake_anthropic import ScriptedApi, error, reply, text

EMBER, SAGE = AgentName("Ember"), AgentName("Sage")
FAILED = ActionResult.fail("you cannot gather here: the stone is spent for 3 more ticks",
                           reason=FailureReason.NOT_ALLOWED)


def ctx(agent: str = "Ember", action: str = "gather") -> NarrationContext:
    return NarrationContext(AgentName(agent), 5, Position(1, 1), "morning", Weather.RAINY,
                            action)


def narrator(api: ScriptedApi, **kw) -> ModelNarrator:
    return ModelNarrator(api.client(), "claude-haiku-4-5", speakers={"Ember"}, **kw)


async def test_an_offline_agents_actions_keep_the_template_and_cost_nothing():
    api = ScriptedApi()
    told = await narrator(api).narrate(FAILED, ctx("Sage"))
    assert told == TemplateNarrator().narrate_now(FAILED, ctx("Sage")) and api.requests == []


async def test_a_simple_success_keeps_its_template():
    api = ScriptedApi()
    walked = ActionResult.ok("you walk 3 steps north onto grass")
    told = await narrator(api).narrate(walked, ctx(action="walk"))
    assert "you walk 3 steps north onto grass" in told and api.requests == []


async def test_a_failure_is_retold_by_the_model_when_it_keeps_the_facts():
    retold = ("Rain beads on the bare rock. The stone here is spent; you cannot gather "
              "here for 3 more ticks.")
    api = ScriptedApi([reply(text(retold), input_tokens=120, output_tokens=40)])
    n = narrator(api)
    assert await n.narrate(FAILED, ctx()) == retold
    sent = api.requests[0]
    assert sent["model"] == "claude-haiku-4-5" and "Keep every fact" in sent["system"]
    assert "spent for 3 more ticks" in sent["messages"][0]["content"]
    assert n.take_spend("Ember") == {"model": "claude-haiku-4-5", "requests": [
        {"usage": {"input": 120, "output": 40, "cache_write": 0, "cache_read": 0}}]}
    assert n.take_spend("Ember") is None  # taken once, with its turn


async def test_a_retelling_that_loses_a_fact_is_not_used():
    api = ScriptedApi([reply(text("Rain falls; the stone is spent for a while."))])
    n = narrator(api)
    told = await n.narrate(FAILED, ctx())
    assert told == TemplateNarrator().narrate_now(FAILED, ctx()) and n.kept_template == 1


async def test_an_api_failure_or_a_reached_budget_keeps_the_template():
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded")])
    plain = TemplateNarrator().narrate_now(FAILED, ctx())
    assert await narrator(api).narrate(FAILED, ctx()) == plain
    meter = SpendMeter({"claude-haiku-4-5": Price(1, 5, 1.25, 0.1)}, Budgets(per_run=1.0), 24)
    meter.add("Ember", 0, "claude-haiku-4-5", Usage(input=10**6))
    quiet = ScriptedApi()
    assert await narrator(quiet, meter=meter).narrate(FAILED, ctx()) == plain
    assert quiet.requests == []


async def test_a_scene_is_retold_for_speakers_only():
    seen = Perception(
        agent=EMBER, tick=5, position=Position(1, 1), time_text="day 1, 12:00 (afternoon)",
        period="afternoon", weather=Weather.CLEAR, vision_radius=3, grid_view="@",
        narrative="Sage stands 2 cells to the north. The Old Tree rises to the east.",
        inventory_text="", journey_text=None, visible_agents_text="", conversation_text=None,
        invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
        standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
        in_conversation_with=(), pending_invitation_from=None)
    good = "In the noon light Sage stands 2 cells to the north, and the Old Tree rises east."
    api = ScriptedApi([reply(text(good))])
    n = narrator(api)
    assert await n.describe("Ember", 5, seen) == good
    assert await n.describe("Sage", 5, seen) is None
    assert len(api.requests) == 1


def test_keeping_facts_means_numbers_quotes_and_names():
    source = "you write a sign: 'Beware the ford'; Sage reads 2 lines of grass_basket notes"
    assert keeps_facts(source, "You carve 'Beware the ford'. Sage reads 2 lines about a "
                               "grass_basket.")
    assert not keeps_facts(source, "You carve 'Beware the ford'. Sage reads a few lines of "
                                   "grass_basket notes.")
    assert not keeps_facts(source, "You carve a warning. Sage reads 2 lines of grass_basket.")
    assert not keeps_facts(source, "You carve 'Beware the ford'; someone reads 2 lines of "
                                   "grass_basket notes.")
    assert not keeps_facts("make 12 planks", "you make 1 plank, then 2")


async def test_after_a_failed_retelling_the_templates_stand_for_a_while_without_asking():
    """A narrator whose API is down or slow is not asked again at every action: one
    failure (here a 529, and its one retry) and the templates stand alone for
    `rest_after_failure` seconds; after that the model is asked again."""
    now = [1000.0]
    api = ScriptedApi([error(529, "overloaded_error", "Overloaded", **{"retry-after": "0"}),
                       error(529, "overloaded_error", "Overloaded", **{"retry-after": "0"})])
    n = narrator(api)
    n.clock = lambda: now[0]
    plain = TemplateNarrator().narrate_now(FAILED, ctx())
    assert await n.narrate(FAILED, ctx()) == plain
    assert len(api.requests) == 2  # the first try and its one retry
    now[0] += n.rest_after_failure - 1
    later = await n.narrate(FAILED, ctx())  # the same turn: the template, uncoloured
    assert later.endswith(plain.split(", ", 1)[1].split(" — ", 1)[1]) and n.kept_template == 2
    assert len(api.requests) == 2  # resting: not asked
    now[0] += 2
    api.add(reply(text("Rain on the grass, and nothing gathered: the ground here is bare.")))
    await n.narrate(FAILED, ctx())
    assert len(api.requests) == 3  # asked again once the rest is over
