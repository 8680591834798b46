"""The template narrator: every action and every failure has a framing, the engine's
message always survives whole, and the telling is deterministic and coloured by
time, weather and shelter."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.actions import (
    ACTION_TYPES,
    AcceptInviteAction,
    Action,
    ActionResult,
    ApplyAction,
    ApproachAction,
    BuildShelterAction,
    CombineAction,
    DeclineInviteAction,
    DropAction,
    ExamineAction,
    GatherAction,
    GiveAction,
    InviteAction,
    JoinConversationAction,
    JourneyAction,
    LeaveConversationAction,
    NamePlaceAction,
    PlaceDoorAction,
    PlaceItemAction,
    PlaceWallAction,
    ReadSignAction,
    RemoveWallAction,
    SenseOthersAction,
    SleepAction,
    SpeakAction,
    TakeAction,
    WalkAction,
    WorkAction,
    WriteSignAction,
)
from core.failures import FailureReason
from core.terrain import Weather
from core.types import AgentName, Direction, Position
from services.narrator import (
    COLOUR,
    COLOUR_OPENINGS,
    FAILURE,
    PERIODS,
    SUCCESS,
    Frames,
    NarrationContext,
    Narrator,
    TemplateNarrator,
)
from tests.tool_calls import call_tool
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    CEDAR,
    COAST_CELL,
    START,
    fails,
    give_stuff,
    make_sim,
    put,
    succeeds,
)

N = Direction.NORTH


def tell(result: ActionResult, context: NarrationContext) -> str:
    """A turn's first narration (a fresh narrator colours its first result of a tick)."""
    return TemplateNarrator().narrate_now(result, context)


ROOT = Path(__file__).resolve().parents[3]
TALK = [(ASH, InviteAction(BIRCH)), (BIRCH, AcceptInviteAction())]

SCRIPTS: dict[str, tuple[list[tuple[str, Action]], str, Action]] = {
    # action -> (steps that must succeed first, who acts, the action)
    "walk": ([], ASH, WalkAction(N)),
    "approach": ([], ASH, ApproachAction("Cedar")),
    "journey": ([], ASH, JourneyAction(Position(8, 1))),
    "examine": ([], ASH, ExamineAction()),
    "sense_others": ([], ASH, SenseOthersAction()),
    "take": ([(ASH, DropAction("wood", 2))], ASH, TakeAction()),
    "drop": ([], ASH, DropAction("wood")),
    "give": ([], ASH, GiveAction(BIRCH, "wood")),
    "gather": ([], ASH, GatherAction()),
    "combine": ([], ASH, CombineAction(("clay", "grass"))),
    "work": ([], ASH, WorkAction("wood", "split")),
    "apply": ([], ASH, ApplyAction("stone_axe", "wood")),
    "build_shelter": ([], ASH, BuildShelterAction()),
    "place_wall": ([], ASH, PlaceWallAction(N)),
    "place_door": ([(ASH, PlaceWallAction(N))], ASH, PlaceDoorAction(N)),
    "place_item": ([], ASH, PlaceItemAction("wood")),
    "remove_wall": ([(ASH, PlaceWallAction(N))], ASH, RemoveWallAction(N)),
    "write_sign": ([], ASH, WriteSignAction("hello")),
    "read_sign": ([(ASH, WriteSignAction("hello"))], ASH, ReadSignAction()),
    "name_place": ([], ASH, NamePlaceAction("Ash Corner")),
    "sleep": ([], ASH, SleepAction()),
    "speak": (TALK, ASH, SpeakAction("hello")),
    "invite": ([], ASH, InviteAction(BIRCH)),
    "accept_invite": ([(ASH, InviteAction(BIRCH))], BIRCH, AcceptInviteAction()),
    "decline_invite": ([(ASH, InviteAction(BIRCH))], BIRCH, DeclineInviteAction()),
    "join_conversation": (TALK, CEDAR, JoinConversationAction(ASH)),
    "leave_conversation": (TALK, ASH, LeaveConversationAction()),
}
"""A real success of every action, through the real engine."""


@functools.cache
def real_success(name: str) -> ActionResult:
    steps, who, action = SCRIPTS[name]
    sim = make_sim()
    for actor, step in steps:
        succeeds(sim, actor, step)
    return succeeds(sim, who, action)


def ctx(action: str = "gather", *, tick: int = 3, period: str = "morning",
        weather: Weather = Weather.CLEAR, indoors: bool = False,
        agent: str = ASH) -> NarrationContext:
    return NarrationContext(AgentName(agent), tick, START[ASH], period, weather, action, indoors)


def every_context(action: str) -> list[NarrationContext]:
    return [ctx(action, tick=t, period=p, weather=w, indoors=i)
            for t in (0, 1, 7) for p in PERIODS for w in Weather for i in (False, True)]


def framing(text: str, context: NarrationContext) -> str:
    """The framing clause of a narration: after its colour clause, before the dash."""
    colour = next(c for c in COLOUR[context.period, context.weather, context.indoors]
                  if text.startswith(f"{c}, "))
    return text[len(colour) + 2:].split(" — ", 1)[0]


def clauses(frames: Frames, data) -> list[str]:
    return [*frames.plain, *(c.format_map(data) for c in frames.rich if _has(data, frames))]


def _has(data, frames: Frames) -> bool:
    return all(data.get(k) not in (None, "") for k in frames.needs)


# ------------------------------------------------------------------ the tables


def test_every_action_has_a_success_framing():
    assert set(SUCCESS) == set(ACTION_TYPES)


def test_every_failure_reason_has_a_framing():
    assert set(FAILURE) == set(FailureReason)


def test_the_scripts_cover_every_action():
    assert set(SCRIPTS) == set(ACTION_TYPES)


def test_every_time_and_weather_has_colour():
    assert set(COLOUR) == {(p, w, i) for p in PERIODS for w in Weather for i in (False, True)}


def test_rich_clauses_name_fields_the_handlers_really_give():
    """A rich clause keyed on a field no handler sets would never be used."""
    for name, frames in SUCCESS.items():
        data = real_success(name).data
        assert set(frames.needs) <= set(data), f"{name}: {frames.needs} vs {sorted(data)}"


# ------------------------------------------------------------------ successes


@pytest.mark.parametrize("name", sorted(ACTION_TYPES))
def test_a_real_success_is_told_with_its_whole_message(name):
    result = real_success(name)
    for context in every_context(name):
        text = tell(result, context)
        assert result.message in text
        assert framing(text, context) in clauses(SUCCESS[name], result.data), text
        assert text.endswith(".") and "\n" not in text
        assert text.count(". ") + 1 <= 3, text
        assert not set(text.replace(result.message, "")) & set("*#`<>[]{}"), text


def test_data_fields_shape_the_framing_when_present():
    result = real_success("gather")  # grass, from the grass under Ash
    texts = {tell(result, ctx(tick=t)) for t in range(40)}
    rich = {c.format_map(result.data) for c in SUCCESS["gather"].rich}
    assert any(clause in text for text in texts for clause in rich)


def test_a_missing_field_falls_back_to_a_plain_framing():
    bare = ActionResult.ok("you gather 1 wood from the forest")
    texts = {tell(bare, ctx(tick=t)) for t in range(40)}
    assert all(any(p in text for p in SUCCESS["gather"].plain) for text in texts)
    no_material = ActionResult.ok("you raise a wall of nothing on the north side", (),
                                  {"material": None, "structure": False})
    text = tell(no_material, ctx("place_wall"))
    assert "None" not in text
    assert any(p in text for p in SUCCESS["place_wall"].plain)


def test_an_unknown_tool_still_gets_a_narration():
    result = ActionResult.ok("it happened")
    assert tell(result, ctx("fly")).endswith("it happened.")


# ------------------------------------------------------------------ failures


def walk_into_water(sim):
    put(sim, ASH, COAST_CELL)
    return fails(sim, ASH, WalkAction(Direction.SOUTH))


def gather_spent(sim):
    while sim.engine.execute_now(ASH, GatherAction(), 0).success:
        pass
    return fails(sim, ASH, GatherAction())


def walk_asleep(sim):
    succeeds(sim, ASH, SleepAction())
    return fails(sim, ASH, WalkAction(N))


def wall_without_means(sim):
    give_stuff(sim, ASH)
    return fails(sim, ASH, PlaceWallAction(N))


@pytest.mark.parametrize(("setup", "reason"), [
    (walk_into_water, FailureReason.BLOCKED),
    (gather_spent, FailureReason.DEPLETED),
    (walk_asleep, FailureReason.ASLEEP),
    (wall_without_means, FailureReason.CANNOT_AFFORD),
    (lambda sim: fails(sim, ASH, SpeakAction("hi")), FailureReason.NOT_IN_CONVERSATION),
    (lambda sim: fails(sim, ASH, ReadSignAction()), FailureReason.NO_SIGN),
    (lambda sim: fails(sim, ASH, GiveAction(CEDAR, "wood")), FailureReason.TOO_FAR),
    (lambda sim: fails(sim, ASH, CombineAction(("wood", "stone"))), FailureReason.NO_RECIPE),
    (lambda sim: fails(sim, ASH, ApproachAction("dragon")), FailureReason.NOT_VISIBLE),
])
def test_a_real_failure_is_framed_by_its_reason(setup, reason):
    result = setup(make_sim())
    assert result.reason is reason
    for context in every_context("whatever"):
        text = tell(result, context)
        assert result.message in text
        assert framing(text, context) in FAILURE[reason].plain, text


async def test_a_malformed_tool_call_is_narrated_as_bad_input():
    sim = make_sim()
    result = await call_tool(sim.engine, ASH, "walk", {"direction": "up"}, 0)
    assert result.reason is FailureReason.BAD_INPUT
    text = tell(result, ctx("walk"))
    assert result.message in text
    assert any(p in text for p in FAILURE[FailureReason.BAD_INPUT].plain)


@pytest.mark.parametrize("reason", list(FailureReason))
def test_every_reason_frames_its_message(reason):
    result = ActionResult.fail("it could not be done; try something else", reason=reason)
    text = tell(result, ctx())
    assert text.endswith("it could not be done; try something else.")
    assert any(p in text for p in FAILURE[reason].plain)


def test_the_failure_framings_differ_by_reason():
    firsts = [frames.plain[0] for frames in FAILURE.values()]
    assert len(set(firsts)) == len(firsts)


# ------------------------------------------------------------------ agent text


TRICKY = 'He said "it\'s {terrain} %s {0}" C:\\path — In the morning rain, you win'


def test_a_sign_is_quoted_verbatim_and_cannot_break_the_framing():
    sim = make_sim()
    written = succeeds(sim, ASH, WriteSignAction(TRICKY))
    read = succeeds(sim, ASH, ReadSignAction())
    for name, result in (("write_sign", written), ("read_sign", read)):
        assert result.data["text"] == TRICKY
        assert TRICKY not in result.message  # repr escaped the quotes and the backslash
        text = tell(result, ctx(name, weather=Weather.FOGGY))
        assert text.count(TRICKY) == 1
        assert text.endswith(f"“{TRICKY}”.")
        assert result.message in text
        assert text.startswith(("Through the morning fog, ", "In the pale morning mist, "))
        assert "{terrain}" in text and "{0}" in text  # never treated as a template


def test_a_plain_sign_is_not_repeated():
    sim = make_sim()
    result = succeeds(sim, ASH, WriteSignAction("Fresh water east"))
    text = tell(result, ctx("write_sign"))
    assert text.count("Fresh water east") == 1


def test_a_place_name_is_kept_verbatim():
    sim = make_sim()
    name = "Jo's \"Nook\""
    result = succeeds(sim, ASH, NamePlaceAction(name))
    text = tell(result, ctx("name_place"))
    assert name in text and result.message in text


def test_speech_over_several_lines_stays_one_line():
    sim = make_sim()
    for actor, step in TALK:
        succeeds(sim, actor, step)
    result = succeeds(sim, ASH, SpeakAction("first line\nsecond {line}"))
    text = tell(result, ctx("speak"))
    assert result.message in text and "\n" not in text and "{line}" in text


# ------------------------------------------------------------------ colour


def test_colour_differs_by_period_and_weather():
    result = real_success("walk")
    texts = {tell(result, ctx("walk", period=p, weather=w))
             for p in PERIODS for w in Weather}
    assert len(texts) == len(PERIODS) * len(Weather)


def test_rain_is_mentioned_outdoors_and_never_indoors():
    result = real_success("gather")
    for tick in range(20):
        for period in PERIODS:
            wet = tell(result, ctx(tick=tick, period=period,
                                                  weather=Weather.RAINY))
            dry = tell(result, ctx(tick=tick, period=period,
                                                  weather=Weather.RAINY, indoors=True))
            assert "rain" in wet.lower()
            assert "rain" not in dry.lower()
            assert dry == tell(
                result, ctx(tick=tick, period=period, weather=Weather.CLEAR, indoors=True))


def test_night_is_told_as_night():
    result = real_success("walk")
    for weather in Weather:
        for tick in range(10):
            text = tell(result, ctx("walk", tick=tick, period="night",
                                                   weather=weather))
            assert any(word in text.lower() for word in ("night", "dark", "star"))


# ------------------------------------------------------------------ determinism


def test_the_same_moment_reads_the_same():
    result = real_success("gather")
    assert tell(result, ctx(tick=9)) == TemplateNarrator().narrate_now(
        result, ctx(tick=9))


def test_variants_change_with_agent_tick_and_action():
    result = real_success("gather")
    by_tick = {tell(result, ctx(tick=t)) for t in range(30)}
    by_agent = {tell(result, ctx(agent=f"A{i}")) for i in range(30)}
    assert len(by_tick) > 1 and len(by_agent) > 1


SCRIPT = """
import json, sys
from core.actions import ActionResult
from core.failures import FailureReason
from core.terrain import Weather
from core.types import AgentName, Position
from services.narrator import TemplateNarrator, NarrationContext
n = TemplateNarrator()
ok = ActionResult.ok("you gather 1 grass from the grass", (), {"resource": "grass"})
no = ActionResult.fail("there is no sign here", reason=FailureReason.NO_SIGN)
out = [n.narrate_now(r, NarrationContext(AgentName(a), t, Position(0, 0), "evening",
                                         Weather.CLOUDY, act))
       for r in (ok, no) for a in ("Ash", "Birch", "Cedar") for t in range(12)
       for act in ("gather", "read_sign")]
if __name__ == "__main__":
    json.dump(out, sys.stdout)
"""


def test_variants_do_not_depend_on_the_process_hash_seed():
    """Python salts str hashes per process; another process must still tell it the same."""
    here: dict = {"__name__": "here"}
    exec(SCRIPT, here)
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": seed},
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == here["out"]
    assert len(set(here["out"])) > 4


# ------------------------------------------------------------------ the values


def test_the_context_checks_its_period_and_weather():
    with pytest.raises(ValueError, match="period must be one of"):
        ctx(period="dawn")
    with pytest.raises(ValueError):
        ctx(weather="snowy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tick"):
        ctx(tick=-1)
    assert ctx(weather="rainy").weather is Weather.RAINY  # type: ignore[arg-type]


def test_frames_refuse_clauses_that_cannot_be_filled():
    with pytest.raises(ValueError, match="names"):
        Frames(("plain",), ("the {thing} and {other}",), ("thing",))
    with pytest.raises(ValueError, match="cannot name fields"):
        Frames(("the {thing}",))
    with pytest.raises(ValueError, match="at least one plain"):
        Frames(())
    with pytest.raises(ValueError, match="no rich clause"):
        Frames(("plain",), (), ("thing",))


async def test_the_async_narration_is_the_template_one():
    narrator: Narrator = TemplateNarrator()
    result = real_success("sleep")
    assert await narrator.narrate(result, ctx("sleep")) == tell(
        result, ctx("sleep"))


def test_the_time_and_weather_colour_only_the_first_result_of_a_turn():
    narrator = TemplateNarrator()
    result = real_success("gather")
    first = narrator.narrate_now(result, ctx(tick=4, weather=Weather.RAINY))
    rest = [narrator.narrate_now(result, ctx(action, tick=4, weather=Weather.RAINY))
            for action in ("gather", "walk", "gather")]
    assert "rain" in first.lower() and first.startswith(COLOUR_OPENINGS)
    for text in rest:
        assert not text.startswith(COLOUR_OPENINGS) and "rain" not in text.lower(), text
        assert text[0].isupper() and result.message in text
    assert narrator.narrate_now(result, ctx(tick=5)).startswith(COLOUR_OPENINGS)  # next turn
    other = narrator.narrate_now(result, ctx(tick=5, agent=BIRCH))
    assert other.startswith(COLOUR_OPENINGS)  # each agent's own turn
