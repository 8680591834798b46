"""Every failure says why in a word: real refusals from the real engine carry the right
FailureReason, every reason is produced by some real refusal, and none is left empty."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

import services.action_engine as action_engine
from core.actions import (
    AcceptInviteAction,
    Action,
    ActionResult,
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
from core.agent import InventoryError
from core.conversation import Privacy
from core.failures import FailureReason as R
from core.types import AgentName, Direction, Position
from services.action_engine import refusal_reason
from services.agent_service import AgentRuleError
from services.conversation_service import ConversationError
from services.simulation import Simulation
from services.world_cells import WorldRuleError
from tests.unit.services.actions.conftest import (
    ASH,
    BIRCH,
    CEDAR,
    COAST_CELL,
    DUSK,
    SAMPLE_ACTIONS,
    START,
    WATER_CELL,
    fails,
    fails_tool,
    give_stuff,
    make_sim,
    put,
    succeeds,
)

N, S, E, W = Direction.NORTH, Direction.SOUTH, Direction.EAST, Direction.WEST
CORNER = Position(0, 0)
ZED = AgentName("Zed")


@dataclass(frozen=True, slots=True)
class FlyAction(Action):
    """An action the engine has no handler for."""

    name: ClassVar[str] = "fly"


# ------------------------------------------------------------------ set-ups

Case = Callable[[Simulation], ActionResult]
"""Sets up a refusal and returns it (through `fails`, which checks nothing changed)."""


def box(sim: Simulation, centre: Position, radius: int = 0) -> None:
    """Walls all round the square of cells within `radius` of `centre` (no doors)."""
    for x in range(centre.x - radius, centre.x + radius + 1):
        sim.world.place_wall(Position(x, centre.y - radius), N)
        sim.world.place_wall(Position(x, centre.y + radius), S)
    for y in range(centre.y - radius, centre.y + radius + 1):
        sim.world.place_wall(Position(centre.x - radius, y), W)
        sim.world.place_wall(Position(centre.x + radius, y), E)


def talking(sim: Simulation, privacy: Privacy = Privacy.PUBLIC) -> None:
    succeeds(sim, ASH, InviteAction(BIRCH, privacy))
    succeeds(sim, BIRCH, AcceptInviteAction())


def at(pos: Position, action: Action, name: str = ASH) -> Case:
    """Ash (or `name`) stands at `pos` and tries `action`."""
    def run(sim: Simulation) -> ActionResult:
        put(sim, name, pos)
        return fails(sim, name, action)
    return run


def walled(direction: Direction, action: Action) -> Case:
    """A wall on one side of Ash, then `action`."""
    def run(sim: Simulation) -> ActionResult:
        sim.world.place_wall(START[ASH], direction)
        return fails(sim, ASH, action)
    return run


def after(steps: list[tuple[str, Action]], name: str, action: Action, tick: int = 0) -> Case:
    """Steps that must succeed, then the action that must fail."""
    def run(sim: Simulation) -> ActionResult:
        for who, step in steps:
            succeeds(sim, who, step)
        return fails(sim, name, action, tick)
    return run


def just(action: Action, name: str = ASH) -> Case:
    return lambda sim: fails(sim, name, action)


def spent_grass(sim: Simulation) -> ActionResult:
    while sim.engine.execute_now(ASH, GatherAction(), 0).success:
        pass
    return fails(sim, ASH, GatherAction())


def shelter_without_door(sim: Simulation) -> ActionResult:
    give_stuff(sim, ASH, stone=8)  # four walls of stone, and nothing a door is made of
    return fails(sim, ASH, BuildShelterAction())


def with_nothing(action: Action) -> Case:
    def run(sim: Simulation) -> ActionResult:
        give_stuff(sim, ASH)
        sim.world.place_wall(START[ASH], E)
        return fails(sim, ASH, action)
    return run


def approach_boxed_in(sim: Simulation) -> ActionResult:
    box(sim, START[CEDAR], radius=1)
    return fails(sim, ASH, ApproachAction("Cedar"))


def journey_boxed_in(sim: Simulation) -> ActionResult:
    box(sim, Position(15, 15))
    return fails(sim, ASH, JourneyAction(Position(15, 15)))


def give_through_wall(sim: Simulation) -> ActionResult:
    sim.world.place_wall(START[ASH], E)  # Birch stands east
    return fails(sim, ASH, GiveAction(BIRCH, "wood"))


def door_twice(sim: Simulation) -> ActionResult:
    sim.world.place_wall(START[ASH], N)
    sim.world.place_door(START[ASH], N)
    return fails(sim, ASH, PlaceDoorAction(N))


def talking_then(privacy: Privacy, name: str, action: Action) -> Case:
    def run(sim: Simulation) -> ActionResult:
        talking(sim, privacy)
        return fails(sim, name, action)
    return run


def stale_after_the_talk_ended(sim: Simulation) -> ActionResult:
    talking(sim)
    succeeds(sim, ASH, InviteAction(CEDAR))
    succeeds(sim, ASH, LeaveConversationAction())  # two less one: it ends
    return fails(sim, CEDAR, AcceptInviteAction())


def stale_after_the_inviter_left(sim: Simulation) -> ActionResult:
    talking(sim)
    succeeds(sim, CEDAR, JoinConversationAction(ASH))
    put(sim, DUSK, Position(7, 8))
    succeeds(sim, ASH, InviteAction(DUSK))
    succeeds(sim, ASH, LeaveConversationAction())  # Birch and Cedar talk on
    return fails(sim, DUSK, AcceptInviteAction())


def stale_after_other_privacy(sim: Simulation) -> ActionResult:
    succeeds(sim, ASH, InviteAction(CEDAR, Privacy.PUBLIC))
    talking(sim, Privacy.PRIVATE)
    return fails(sim, CEDAR, AcceptInviteAction())


def accept_while_talking(sim: Simulation) -> ActionResult:
    talking(sim)
    put(sim, DUSK, Position(11, 11))
    succeeds(sim, DUSK, InviteAction(CEDAR))
    succeeds(sim, CEDAR, JoinConversationAction(ASH))
    return fails(sim, CEDAR, AcceptInviteAction())


def bug_in_a_service(sim: Simulation) -> ActionResult:
    def boom(name: str) -> list:
        raise RuntimeError("a bug")
    sim.agents.sense_others = boom  # type: ignore[method-assign]
    return fails(sim, ASH, SenseOthersAction())


def bad_ids(sim: Simulation) -> ActionResult:
    sim.engine.new_id = lambda prefix: ""  # carving a bowl makes a unique item, which needs one
    return fails(sim, ASH, WorkAction("wood", "carve"))


CASES: list[tuple[str, R, Case]] = [
    ("unknown actor", R.NO_SUCH_AGENT, just(WalkAction(N), name=ZED)),
    ("give to nobody", R.NO_SUCH_AGENT, just(GiveAction(ZED, "wood"))),
    ("invite nobody", R.NO_SUCH_AGENT, just(InviteAction(ZED))),
    ("join nobody", R.NO_SUCH_AGENT, just(JoinConversationAction(ZED))),
    ("no handler", R.BAD_INPUT, just(FlyAction())),
    ("blank sign", R.BAD_INPUT, just(WriteSignAction("\x07"))),
    ("blank place name", R.BAD_INPUT, just(NamePlaceAction("\x07"))),
    ("blank speech", R.BAD_INPUT, just(SpeakAction("\x07"))),
    ("not an item name", R.BAD_INPUT, just(WorkAction("Wood!", "split"))),
    ("unknown technique", R.BAD_INPUT, just(WorkAction("wood", "smash"))),
    ("overlong name", R.TOO_LONG, just(GiveAction(BIRCH, "x" * 101))),
    ("too many things", R.TOO_LONG, just(CombineAction(("wood",) * 21))),
    ("give to yourself", R.YOURSELF, just(GiveAction(ASH, "wood"))),
    ("invite yourself", R.YOURSELF, just(InviteAction(ASH))),
    ("join yourself", R.YOURSELF, just(JoinConversationAction(ASH))),
    ("asleep", R.ASLEEP, after([(ASH, SleepAction())], ASH, WalkAction(N))),
    ("travelling", R.TRAVELLING,
     after([(ASH, JourneyAction(Position(8, 1)))], ASH, GatherAction())),
    ("walk off the world", R.WORLD_EDGE, at(CORNER, WalkAction(W))),
    ("examine off the world", R.WORLD_EDGE, at(CORNER, ExamineAction(N))),
    ("take off the world", R.WORLD_EDGE, at(CORNER, TakeAction(W))),
    ("gather off the world", R.WORLD_EDGE, at(CORNER, GatherAction(N))),
    ("place off the world", R.WORLD_EDGE, at(CORNER, PlaceItemAction("wood", W))),
    ("sign off the world", R.WORLD_EDGE, at(CORNER, WriteSignAction("hi", N))),
    ("wall on the world's edge", R.WORLD_EDGE, at(CORNER, PlaceWallAction(W))),
    ("shelter on the world's edge", R.WORLD_EDGE, at(CORNER, BuildShelterAction())),
    ("journey out of the world", R.OUT_OF_BOUNDS, just(JourneyAction(Position(50, 50)))),
    ("walk into water", R.BLOCKED, at(COAST_CELL, WalkAction(S))),
    ("journey onto water", R.BLOCKED, just(JourneyAction(WATER_CELL))),
    ("place onto water", R.BLOCKED, at(COAST_CELL, PlaceItemAction("wood", S))),
    ("sign onto water", R.BLOCKED, at(COAST_CELL, WriteSignAction("hi", S))),
    ("walk into a wall", R.WALL_IN_WAY, walled(N, WalkAction(N))),
    ("take through a wall", R.WALL_IN_WAY, walled(N, TakeAction(N))),
    ("gather through a wall", R.WALL_IN_WAY, walled(N, GatherAction(N))),
    ("place through a wall", R.WALL_IN_WAY, walled(N, PlaceItemAction("wood", N))),
    ("sign through a wall", R.WALL_IN_WAY, walled(N, WriteSignAction("hi", N))),
    ("read through a wall", R.WALL_IN_WAY, walled(N, ReadSignAction(N))),
    ("give through a wall", R.WALL_IN_WAY, give_through_wall),
    ("approach the boxed in", R.NO_PATH, approach_boxed_in),
    ("journey into a box", R.NO_PATH, journey_boxed_in),
    ("approach who is beside you", R.ALREADY_THERE, just(ApproachAction("Birch"))),
    ("journey to where you stand", R.ALREADY_THERE, just(JourneyAction(START[ASH]))),
    ("give to someone not beside you", R.TOO_FAR, just(GiveAction(CEDAR, "wood"))),
    ("approach what is not there", R.NOT_VISIBLE, just(ApproachAction("dragon"))),
    ("invite out of sight", R.NOT_VISIBLE, just(InviteAction(DUSK))),
    ("join out of sight", R.NOT_VISIBLE, just(JoinConversationAction(DUSK))),
    ("journey to no such place", R.NO_SUCH_PLACE, just(JourneyAction(place_name="Nowhere"))),
    ("take nothing", R.NOTHING_HERE, just(TakeAction())),
    ("take what is not there", R.NOTHING_HERE, just(TakeAction(item="gold"))),
    ("drop what you lack", R.NOT_CARRYING, just(DropAction("gold"))),
    ("drop more than you have", R.NOT_CARRYING, just(DropAction("wood", 100))),
    ("drop two of a unique thing", R.NOT_CARRYING, just(DropAction("carved_bowl", 2))),
    ("give what you lack", R.NOT_CARRYING, just(GiveAction(BIRCH, "gold"))),
    ("place what you lack", R.NOT_CARRYING, just(PlaceItemAction("gold"))),
    ("work what you lack", R.NOT_CARRYING, just(WorkAction("fiber", "twist"))),
    ("gather from water's edge", R.NOTHING_TO_GATHER, at(COAST_CELL, GatherAction())),
    ("gather spent grass", R.DEPLETED, spent_grass),
    ("combine to nothing", R.NO_RECIPE, just(CombineAction(("wood", "stone")))),
    ("work to nothing", R.NO_RECIPE, just(WorkAction("wood", "twist"))),
    ("wall with nothing", R.CANNOT_AFFORD, with_nothing(PlaceWallAction(N))),
    ("door with nothing", R.CANNOT_AFFORD, with_nothing(PlaceDoorAction(E))),
    ("shelter with nothing", R.CANNOT_AFFORD, with_nothing(BuildShelterAction())),
    ("shelter without a door", R.CANNOT_AFFORD, shelter_without_door),
    ("wall twice", R.WALL_EXISTS, walled(N, PlaceWallAction(N))),
    ("remove no wall", R.NO_WALL, just(RemoveWallAction(N))),
    ("door without a wall", R.NO_WALL, just(PlaceDoorAction(N))),
    ("door twice", R.DOOR_EXISTS, door_twice),
    ("shelter twice", R.ALREADY_SHELTERED,
     after([(ASH, BuildShelterAction())], ASH, BuildShelterAction())),
    ("read no sign", R.NO_SIGN, just(ReadSignAction())),
    ("name a landmark's name", R.NAME_TAKEN, just(NamePlaceAction("the Spring"))),
    ("name twice", R.NAME_TAKEN,
     after([(ASH, NamePlaceAction("Here"))], BIRCH, NamePlaceAction("Here"))),
    ("invite someone talking", R.IN_CONVERSATION,
     talking_then(Privacy.PUBLIC, CEDAR, InviteAction(BIRCH))),
    ("invite your own company", R.IN_CONVERSATION,
     talking_then(Privacy.PUBLIC, ASH, InviteAction(BIRCH))),
    ("join while talking", R.IN_CONVERSATION,
     talking_then(Privacy.PUBLIC, BIRCH, JoinConversationAction(ASH))),
    ("accept while talking", R.IN_CONVERSATION, accept_while_talking),
    ("speak alone", R.NOT_IN_CONVERSATION, just(SpeakAction("hello"))),
    ("leave no talk", R.NOT_IN_CONVERSATION, just(LeaveConversationAction())),
    ("join the silent", R.NOT_IN_CONVERSATION, just(JoinConversationAction(BIRCH))),
    ("accept nothing", R.NO_INVITATION, just(AcceptInviteAction())),
    ("decline nothing", R.NO_INVITATION, just(DeclineInviteAction())),
    ("accept too late", R.NO_INVITATION,
     after([(ASH, InviteAction(BIRCH))], BIRCH, AcceptInviteAction(), tick=7)),
    ("invite twice", R.ALREADY_INVITED,
     after([(ASH, InviteAction(BIRCH))], ASH, InviteAction(BIRCH))),
    ("invite the invited", R.ALREADY_INVITED,
     after([(ASH, InviteAction(BIRCH))], CEDAR, InviteAction(BIRCH))),
    ("join a private talk", R.PRIVATE_CONVERSATION,
     talking_then(Privacy.PRIVATE, CEDAR, JoinConversationAction(ASH))),
    ("accept after the talk ended", R.INVITATION_STALE, stale_after_the_talk_ended),
    ("accept after the inviter left", R.INVITATION_STALE, stale_after_the_inviter_left),
    ("accept after other privacy", R.INVITATION_STALE, stale_after_other_privacy),
    ("invite into private as public", R.NOT_ALLOWED,
     talking_then(Privacy.PRIVATE, ASH, InviteAction(CEDAR, Privacy.PUBLIC))),
    ("a bug in a service", R.UNEXPECTED, bug_in_a_service),
    ("a bad item id", R.UNEXPECTED, bad_ids),
]


@pytest.mark.parametrize(("reason", "case"), [(r, c) for _, r, c in CASES],
                         ids=[name for name, _, _ in CASES])
def test_a_real_refusal_says_why(sim, reason, case):
    result = case(sim)  # `fails` also checks that nothing changed
    assert result.reason == reason, result.message
    assert isinstance(result.reason, R)


def test_every_reason_is_given_by_some_real_refusal():
    assert {reason for _, reason, _ in CASES} == set(R)


@pytest.mark.parametrize(("tool", "arguments"), [
    ("walk", {"direction": "up"}),
    ("fly", {}),
    ("give", {"recipient": "Birch"}),
    ("combine", {"items": "wood"}),
    ("journey", {"destination": {"x": "far"}}),
    ("invite", {"invitee": "Birch", "privacy": "secret"}),
    ("write_sign", {"text": "x" * 501}),
])
async def test_a_malformed_tool_call_is_bad_input(sim, tool, arguments):
    result = await fails_tool(sim, ASH, tool, arguments)
    assert result.reason == R.BAD_INPUT, result.message


# ------------------------------------------------------------------ nothing left empty


def test_a_failure_cannot_be_made_without_a_reason():
    with pytest.raises(ValueError, match="needs a reason"):
        ActionResult(False, "no")
    with pytest.raises(ValueError, match="needs a reason"):
        ActionResult(False, "no", reason="because")
    with pytest.raises(ValueError, match="no failure reason"):
        ActionResult(True, "yes", reason=R.BLOCKED)


def test_fail_takes_a_reason_and_defaults_to_a_plain_refusal():
    assert ActionResult.fail("no", reason=R.ASLEEP).reason is R.ASLEEP
    assert ActionResult.fail("no").reason is R.NOT_ALLOWED
    assert ActionResult(False, "no", (), {}, "asleep").reason is R.ASLEEP
    assert ActionResult.ok("yes").reason == ""


def test_every_failure_site_in_the_engine_names_its_reason():
    """The default would hide a site that nobody classified; so none may rely on it.
    The sites are the dispatch (services/action_engine.py) and every family's handlers
    (services/action_families/)."""
    sources = [Path(action_engine.__file__),
               *sorted(Path(action_engine.__file__).with_name("action_families").glob("*.py"))]
    assert len(sources) >= 9, sources  # the dispatch, base and eight families
    calls = [(path.name, node) for path in sources
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call)]
    fails_ = [(name, c) for name, c in calls
              if isinstance(c.func, ast.Attribute) and c.func.attr == "fail"]
    unnamed = [(name, c.lineno) for name, c in fails_
               if not any(k.arg == "reason" for k in c.keywords)]
    assert len(fails_) > 40
    assert unnamed == []
    bare = [(name, c.lineno) for name, c in calls
            if isinstance(c.func, ast.Name) and c.func.id == "AgentRuleError"]
    assert bare == [], "the engine's own refusals raise Refusal, which carries a reason"


SITUATIONS: dict[str, Callable[[Simulation, str], object]] = {
    "as it is": lambda sim, who: None,
    "asleep": lambda sim, who: sim.agents.set_sleeping(who, True),
    "travelling": lambda sim, who: sim.agents.start_journey(who, Position(1, 1)),
    "empty-handed": lambda sim, who: give_stuff(sim, who),
    "in the corner": lambda sim, who: put(sim, who, CORNER),
    "on the shore": lambda sim, who: put(sim, who, COAST_CELL),
    "boxed in": lambda sim, who: box(sim, sim.agents.require(who).position),
    "beside a wall": lambda sim, who: sim.world.place_wall(
        sim.agents.require(who).position, N),
    "with a door": lambda sim, who: (
        sim.world.place_wall(sim.agents.require(who).position, N),
        sim.world.place_door(sim.agents.require(who).position, N)),
    "while Ash and Birch talk": lambda sim, who: talking(sim),
    "while Ash and Birch talk privately": lambda sim, who: talking(sim, Privacy.PRIVATE),
    "with Birch invited": lambda sim, who: succeeds(sim, ASH, InviteAction(BIRCH)),
}


@functools.cache
def battery(situation: str) -> tuple[tuple[str, R | str, str], ...]:
    """(who and what, reason, message) for every sample action by every agent."""
    out = []
    for who in (ASH, BIRCH, CEDAR, DUSK):
        for name, action in SAMPLE_ACTIONS.items():
            sim = make_sim()
            SITUATIONS[situation](sim, who)
            result = sim.engine.execute_now(who, action, 1)
            out.append((f"{who} {name}", result.reason, result.message))
    return tuple(out)


@pytest.mark.parametrize("situation", SITUATIONS)
def test_no_refusal_falls_back_to_a_vague_reason(situation):
    """Every sample action by every agent in many situations: each refusal is specific."""
    refused = [entry for entry in battery(situation) if entry[1]]
    assert refused, "the battery refused nothing, so it tested nothing"
    vague = [entry for entry in refused if entry[1] in (R.NOT_ALLOWED, R.UNEXPECTED)]
    assert vague == []


def test_the_battery_meets_many_reasons():
    seen = {reason for situation in SITUATIONS for _, reason, _ in battery(situation)}
    assert len(seen - {""}) >= 15, seen


# ------------------------------------------------------------------ service messages


@pytest.mark.parametrize(("error", "reason"), [
    (WorldRuleError("there is already a wall on the north side"), R.WALL_EXISTS),
    (WorldRuleError("there is no wall on the east side"), R.NO_WALL),
    (WorldRuleError("a door goes in a wall, and there is no wall there"), R.NO_WALL),
    (WorldRuleError("there is already a door on the west side"), R.DOOR_EXISTS),
    (WorldRuleError("'Home' is already the name of a place"), R.NAME_TAKEN),
    (WorldRuleError("time does not run backwards (3 -> 2)"), R.NOT_ALLOWED),
    (AgentRuleError("down is where you already stand; choose north, south, east or west"),
     R.BAD_INPUT),
    (AgentRuleError("a wall stands to the north"), R.WALL_IN_WAY),
    (AgentRuleError("water to the south cannot be crossed"), R.BLOCKED),
    (AgentRuleError("the world ends to the west"), R.WORLD_EDGE),
    (AgentRuleError("nobody called 'Zed' lives here"), R.NO_SUCH_AGENT),
    (AgentRuleError("Ash is not on a journey"), R.NOT_ALLOWED),
    (ConversationError("the message is 2001 characters; the limit is 2000"), R.TOO_LONG),
    (ConversationError("the message is empty: say something"), R.BAD_INPUT),
    (ConversationError("Ash no longer lives here"), R.NO_SUCH_AGENT),
    (ConversationError("something new"), R.NOT_ALLOWED),
    (InventoryError("needs 3 wood, carrying 1"), R.NOT_CARRYING),
    (action_engine.Refusal("the north side of this cell is the world's edge", R.WORLD_EDGE),
     R.WORLD_EDGE),
])
def test_a_service_error_is_classified_by_its_message(error, reason):
    """Messages the engine cannot provoke today (it checks first), classified all the same."""
    assert refusal_reason(error) is reason


def test_a_refusal_is_still_an_agent_rule_error():
    """Callers that catch AgentRuleError from the engine's helpers keep working."""
    assert issubclass(action_engine.Refusal, AgentRuleError)
    assert str(action_engine.Refusal("no", R.BLOCKED)) == "no"

