"""The offline mind's behaviour, from hand-built perceptions through the real turn loop."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import BUILT, Memory
from adapters.offline_mind.walking import HOP_MOST
from core.actions import ActionResult
from core.terrain import Terrain
from services.mind import Mind, ToolCall, ToolOutcome
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    TOOLS,
    calls_of,
    cells_around,
    fail,
    landmark,
    perceive,
    play,
    seen_agent,
    sign,
    start,
    succeed,
)

pytestmark = pytest.mark.asyncio

DELTAS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}


def fresh(seed: int = 1) -> OfflineMind:
    return OfflineMind(seed, PERSONALITIES)


def varied(agent: str, tick: int) -> Any:
    """A day perception that differs with the tick: where it stands, what grows, who is near."""
    at = (100 + tick % 7, 100 + (tick * 3) % 5)
    paint = {(at[0] + 1, at[1]): Terrain.FOREST, (at[0], at[1] - 2): Terrain.WATER,
             (at[0] - 1, at[1] + 1): Terrain.STONE}
    period = ("morning", "afternoon", "evening", "night")[tick % 4]
    agents = (seen_agent("River", (at[0] + 2, at[1]), at),) if tick % 5 == 0 else ()
    return perceive(agent, tick, at, period=period, day=1 + tick // 24,
                    cells=cells_around(at, paint=paint), agents=agents,
                    inventory={"wood": tick % 3, "stone": tick % 2})


async def run_calls(mind: OfflineMind, perception: Any, respond=succeed,
                    max_actions: int = 8) -> list[tuple[str, dict[str, Any]]]:
    """Drive a turn directly (no loop enforcing limits): every call the mind asks for."""
    turn = mind.begin(start(perception, max_actions=max_actions))
    asked: list[tuple[str, dict[str, Any]]] = []
    calls = await turn.next_calls(())
    outcomes: list[ToolOutcome] = []
    for _ in range(50):
        if not calls:
            break
        outcomes = []
        for call in calls:
            asked.append((call.name, dict(call.arguments)))
            result = respond(call)
            outcomes.append(ToolOutcome(call.id, call.name, result.success, result.message,
                                        result.data))
        calls = await turn.next_calls(outcomes)
    await turn.finish(outcomes, "ended")
    return asked


async def test_it_is_a_mind_and_keeps_a_json_record() -> None:
    mind = fresh()
    assert isinstance(mind, Mind) and mind.kind == "offline"
    log = await play(mind, start(varied("Ember", 1)))
    assert json.loads(json.dumps(dict(log.record)))["mind"] == "offline"
    assert log.ended in ("ended", "action_limit") and log.error is None


# ------------------------------------------------------------------ night


async def test_at_night_it_sleeps_after_at_most_one_journal_entry_a_day() -> None:
    mind = fresh()
    journal = Counter()
    for tick in range(14, 21):  # 22:00 to 04:00 of day 1
        log = await play(mind, start(perceive("Sage", tick, period="night", day=1)))
        calls = calls_of(log)
        assert calls[-1] == ("sleep", {})
        for name, args in calls[:-1]:
            assert name == "append_file" and args["path"] == "journal.md" and args["text"]
            journal[1] += 1
    log = await play(mind, start(perceive("Sage", 38, period="night", day=2)))
    journal[2] += sum(1 for name, _ in calls_of(log) if name == "append_file")
    assert journal[1] <= 1 and journal[2] <= 1
    assert journal[1] + journal[2] >= 1  # Sage, a writer, keeps her journal


async def test_without_file_tools_it_just_sleeps() -> None:
    world_only = tuple(t for t in TOOLS if not t.name.endswith("_file") and t.name != "list_files")
    for tick in range(14, 21):
        log = await play(fresh(), start(perceive("Sage", tick, period="night"), tools=world_only))
        assert calls_of(log) == [("sleep", {})]


# ------------------------------------------------------------------ talk


async def test_an_invitation_is_accepted_and_answered_with_a_greeting() -> None:
    accepted = 0
    for tick in range(1, 41):
        log = await play(fresh(), start(perceive("River", tick, pending="Sage")))
        calls = calls_of(log)
        if calls[0] == ("accept_invite", {}):
            accepted += 1
            name, args = calls[1]
            assert name == "speak" and 0 < len(args["message"]) <= 200
            assert "Sage" in args["message"]
        else:
            assert calls[0] == ("decline_invite", {})
    assert accepted >= 36  # River, warm and sociable, almost always says yes


async def test_a_less_social_agent_sometimes_declines_politely() -> None:
    answers = Counter()
    for tick in range(1, 121):
        log = await play(fresh(), start(perceive("Ember", tick, pending="River")))
        answers[calls_of(log)[0][0]] += 1
    assert answers["accept_invite"] > answers["decline_invite"] > 0
    assert set(answers) == {"accept_invite", "decline_invite"}


async def test_in_a_conversation_it_speaks_short_varied_lines_then_takes_its_leave() -> None:
    mind = fresh()
    said: list[str] = []
    left_at = None
    for turn in range(8):
        log = await play(mind, start(perceive("River", 10 + turn, talking=("Sage",))))
        calls = calls_of(log)
        said += [args["message"] for name, args in calls if name == "speak"]
        if ("leave_conversation", {}) in calls:
            left_at = turn
            break
        assert [name for name, _ in calls] == ["speak"]  # one line, then listen
    assert left_at is not None and 2 <= left_at <= 5
    assert all(0 < len(line) <= 200 for line in said)
    assert len(set(said)) == len(said)


async def test_it_invites_someone_it_sees_and_then_waits() -> None:
    at = (50, 50)
    for agent, least in (("River", 30), ("Sage", 18)):
        invited = 0
        for tick in range(1, 31):
            log = await play(fresh(), start(perceive(
                agent, tick, at, agents=(seen_agent("Ember", (52, 50), at),))))
            calls = calls_of(log)
            if calls and calls[0] == ("invite", {"invitee": "Ember"}):
                invited += 1
                assert len(calls) == 1  # the answer is Ember's to give, on Ember's turn
        assert invited >= least, agent  # River always asks; Sage more often than not


async def test_it_does_not_pester_nor_invite_sleepers() -> None:
    at = (50, 50)
    mind = fresh()
    first = await play(mind, start(perceive("River", 3, at, agents=(
        seen_agent("Ember", (52, 50), at),))))
    assert calls_of(first)[0] == ("invite", {"invitee": "Ember"})
    again = await play(mind, start(perceive("River", 4, at, agents=(
        seen_agent("Ember", (52, 50), at),))))
    assert ("invite", {"invitee": "Ember"}) not in calls_of(again)
    for tick in range(1, 20):
        log = await play(fresh(), start(perceive("River", tick, at, agents=(
            seen_agent("Sage", (51, 50), at, is_sleeping=True),))))
        assert all(name != "invite" for name, _ in calls_of(log))


# ------------------------------------------------------------------ making


async def test_it_gathers_what_grows_where_it_stands() -> None:
    gathered = 0
    settled = Memory.of(origin=(30, 30), anchor=(31, 31), haunt="the Spring",
                     marks=(("the Spring", 31, 31),), visited=("the Spring",)).to_state()
    for tick in range(1, 21):
        cells = cells_around((30, 30), ground=Terrain.FOREST)
        mind = fresh()
        mind.set_state("Sage", settled)
        log = await play(mind, start(perceive("Sage", tick, (30, 30), cells=cells)))
        gathers = [args for name, args in calls_of(log) if name == "gather"]
        gathered += bool(gathers)
    assert gathered >= 15


async def test_a_recipe_that_works_is_learned_and_written_down() -> None:
    mind = fresh()

    def world(call: ToolCall) -> ActionResult:
        if call.name == "work" and dict(call.arguments) == {"item": "wood", "technique": "split"}:
            return ActionResult.ok("you make 4 plank", data={"output": "plank", "quantity": 4,
                                                             "discoveries": []})
        return succeed(call)

    calls: list[tuple[str, dict[str, Any]]] = []
    for tick in range(1, 6):
        log = await play(mind, start(perceive("Sage", tick, inventory={"wood": 2})), world)
        calls += calls_of(log)
        if ("work", {"item": "wood", "technique": "split"}) in calls:
            break
    assert ("work", {"item": "wood", "technique": "split"}) in calls
    memory = mind.memory("Sage")
    assert ("work:wood:split", "plank") in memory.recipes
    assert "work:wood:split" not in memory.ideas
    notes = [args["text"] for name, args in calls
             if name == "append_file" and args["path"] == "discoveries.md"]
    assert "- split wood -> 4 plank\n" in notes


async def test_a_wrong_guess_is_never_tried_again_and_its_hints_become_ideas() -> None:
    mind = fresh()
    hints = ["stone can be flattened or ground"]

    def world(call: ToolCall) -> ActionResult:
        if call.name in ("work", "combine"):
            return ActionResult.fail("nothing comes of that; " + "; ".join(hints),
                                     {"hints": hints})
        return succeed(call)

    tried: list[dict[str, Any]] = []
    for tick in range(1, 31):
        log = await play(mind, start(perceive("Ember", tick, inventory={"stone": 3})), world)
        tried += [args for name, args in calls_of(log) if name == "work"]
    breaks = [t for t in tried if t == {"item": "stone", "technique": "break"}]
    assert len(breaks) == 1  # tried once (an obvious idea), failed, never again
    memory = mind.memory("Ember")
    assert "work:stone:break" in memory.failed
    assert "work:stone:*" in memory.failed  # the hints named what works: no more guessing
    later = [t["technique"] for t in tried[tried.index(breaks[0]) + 1:] if t["item"] == "stone"]
    assert set(later) <= {"flatten", "grind"}
    assert len(later) == len(set(later))


async def test_with_materials_at_its_haunt_it_builds_a_shelter_and_marks_it() -> None:
    at, spring = (40, 40), (41, 40)
    settled = Memory.of(anchor=spring, haunt="the Spring", origin=(60, 60),
                     marks=(("the Spring", *spring),), visited=("the Spring",),
                     read=(spring,))
    built = 0
    for tick in range(1, 11):
        mind = fresh()
        mind.set_state("Sage", settled.to_state())
        # The Spring is signed (and read) already: that is not what the turn is for.
        log = await play(mind, start(perceive(
            "Sage", tick, at, landmarks=(landmark("the Spring", spring, at),),
            objects=(sign(spring, at),), inventory={"plank": 12})))
        calls = calls_of(log)
        if ("build_shelter", {}) in calls:
            built += 1
            home = mind.memory("Sage").home
            assert home is not None and abs(home[0] - 41) + abs(home[1] - 40) <= 3
            assert mind.memory("Sage").done & BUILT
    assert built >= 7


# ------------------------------------------------------------------ moving and writing


async def test_it_walks_on_without_stepping_into_water() -> None:
    at = (20, 20)
    water = {(x, y) for x in range(14, 27) for y in range(14, 27)
             if abs(x - at[0]) + abs(y - at[1]) == 2}
    cells = cells_around(at, paint=dict.fromkeys(water, Terrain.WATER))
    for tick in range(1, 21):
        calls = await run_calls(fresh(), perceive("River", tick, at, cells=cells))
        x, y = at
        for name, args in calls:
            if name == "walk":
                dx, dy = DELTAS[args["direction"]]
                x, y = x + dx, y + dy
                assert (x, y) not in water, (tick, calls)


async def test_a_landmark_on_the_horizon_draws_it_and_gets_a_sign() -> None:
    at, spring = (50, 50), (50, 30)
    moves = []
    for tick in range(2, 12):  # one thing a turn: on some turns, that is going there
        calls = await run_calls(fresh(), perceive("Ember", tick, at, landmarks=(
            landmark("the Spring", spring, at),)))
        moves += [args for name, args in calls if name in ("walk", "journey")]
    # 20 cells off: walked toward, or journeyed toward by a hop of at most HOP_MOST cells
    # due north (a journey never takes it past the landmark, nor the whole way at once).
    assert moves and all(
        m.get("direction") == "north" or m.get("place_name") == "the Spring"
        or (m["destination"][0] == 50 and 50 - HOP_MOST <= m["destination"][1] < 50)
        for m in moves)
    mind = fresh()
    near = (50, 31)
    log = await play(mind, start(perceive("Sage", 3, near, landmarks=(
        landmark("the Spring", spring, near),))))
    signs = [args for name, args in calls_of(log) if name == "write_sign"]
    assert signs and signs[0]["direction"] == "north"
    assert "the Spring" in signs[0]["text"] and "every evening" in signs[0]["text"]
    assert mind.memory("Sage").haunt == "the Spring"


async def test_it_reads_signs_and_follows_where_others_come_back_to() -> None:
    at, tree = (10, 10), (10, 9)
    mind = fresh()
    mind.set_state("River", Memory.of(origin=(0, 0), anchor=(0, 0), haunt="the Spring",
                                   marks=(("the Spring", 1, 1), ("the Old Tree", *tree)),
                                   visited=("the Old Tree", "the Spring")).to_state())

    def world(call: ToolCall) -> ActionResult:
        if call.name == "read_sign":
            return ActionResult.ok("the sign reads", data={
                "text": "Sage came to the Old Tree on day 2. I come back here every evening.",
                "author": "Sage"})
        return succeed(call)

    log = await play(mind, start(perceive("River", 30, at, objects=(sign(tree, at),),
                                          landmarks=(landmark("the Old Tree", tree, at),))),
                     world)
    assert ("read_sign", {"direction": "north"}) in calls_of(log)
    memory = mind.memory("River")
    assert memory.haunt == "the Old Tree" and memory.anchor == tree
    assert memory.company == "Sage"
    assert "read a sign by Sage" in memory.diary
    # A landmark seen later that lies nearer where River woke does not pull it away.
    later = await play(mind, start(perceive("River", 31, (2, 2), landmarks=(
        landmark("the Pool", (1, 0), (2, 2)),))))
    assert later.ended != "error"
    assert mind.memory("River").haunt == "the Old Tree"


# ------------------------------------------------------------------ the rules of a turn


@pytest.mark.parametrize("max_actions", [0, 1, 2, 3, 8])
async def test_it_never_asks_for_more_than_max_actions(max_actions: int) -> None:
    for agent in ("Ember", "Sage", "River"):
        for tick in range(24):
            calls = await run_calls(fresh(), varied(agent, tick), max_actions=max_actions)
            assert len(calls) <= max_actions, (agent, tick, calls)


async def test_it_never_repeats_a_call_that_failed_in_the_same_turn() -> None:
    for agent in ("Ember", "Sage", "River"):
        mind = fresh()
        for tick in range(48):
            calls = await run_calls(mind, varied(agent, tick), respond=fail)
            repeated = [c for c, n in Counter(json.dumps(c, sort_keys=True)
                                              for c in calls).items() if n > 1]
            assert not repeated, (agent, tick, calls)


async def test_a_turn_ends_by_itself() -> None:
    for agent in ("Ember", "Sage", "River"):
        for tick in range(24):
            turn = fresh().begin(start(varied(agent, tick), max_actions=1000))
            outcomes: list[ToolOutcome] = []
            calls = await turn.next_calls(())
            for _ in range(200):
                if not calls:
                    break
                outcomes = [ToolOutcome(c.id, c.name, True, "ok", {}) for c in calls]
                calls = await turn.next_calls(outcomes)
            assert not calls, (agent, tick)
            await turn.finish(outcomes, "ended")


# ------------------------------------------------------------------ determinism and memory


async def test_same_seed_same_calls_and_another_seed_differs_somewhere() -> None:
    runs: dict[int, list[Any]] = {}
    for seed in (1, 1, 2):
        mind = OfflineMind(seed, PERSONALITIES)
        out = []
        for tick in range(60):
            for agent in ("Ember", "Sage", "River"):
                out.append(await run_calls(mind, varied(agent, tick)))
        if seed in runs:
            assert out == runs[seed]
        runs[seed] = out
    assert runs[1] != runs[2]


async def test_state_survives_json_and_a_restored_mind_carries_on_identically() -> None:
    original = fresh(5)
    for tick in range(30):
        await run_calls(original, varied("Ember", tick))
    state = original.get_state("Ember")
    stored = json.loads(json.dumps(state))
    assert stored == state
    restored = fresh(5)
    restored.set_state("Ember", stored)
    assert restored.memory("Ember") == original.memory("Ember")
    for tick in range(30, 70):
        assert await run_calls(restored, varied("Ember", tick)) == await run_calls(
            original, varied("Ember", tick))
        assert restored.get_state("Ember") == original.get_state("Ember")


async def test_a_turn_replayed_from_the_committed_state_makes_the_same_calls() -> None:
    mind = fresh(3)
    for tick in range(10):
        await run_calls(mind, varied("River", tick))
    committed = mind.get_state("River")
    first = await run_calls(mind, varied("River", 10))
    mind.set_state("River", committed)  # the tick was lost in a crash: replay it
    assert await run_calls(mind, varied("River", 10)) == first


async def test_the_state_stays_small_after_a_long_life() -> None:
    mind = fresh()
    for tick in range(400):
        await run_calls(mind, varied("Ember", tick), respond=fail if tick % 3 else succeed)
    assert len(json.dumps(mind.get_state("Ember"))) < 4000


async def test_an_agent_it_has_no_personality_for_still_lives() -> None:
    mind = OfflineMind(1, {})
    calls = await run_calls(mind, varied("Stranger", 1))
    assert calls
    with pytest.raises(TypeError):
        OfflineMind("seed", {})  # type: ignore[arg-type]


async def test_get_state_hands_out_a_fresh_dict_each_time() -> None:
    mind = fresh()
    await run_calls(mind, varied("Sage", 2))
    first = mind.get_state("Sage")
    first["haunt"] = "scribbled over"
    first["v"] = 99
    assert mind.get_state("Sage").get("haunt") != "scribbled over"
    assert Memory.from_state(mind.get_state("Sage")) == mind.memory("Sage")


async def test_it_needs_no_prose_and_says_so() -> None:
    assert fresh().reads_text is False  # the engine then skips the grid view and narrative
    empty_text = perceive("Ember", 2, inventory={"wood": 1})
    assert empty_text.narrative == "" and empty_text.grid_view == ""
    assert await run_calls(fresh(), empty_text)


async def test_state_json_is_the_canonical_state_and_kept_while_memory_is_unchanged() -> None:
    mind = fresh()
    for tick in range(1, 6):
        await run_calls(mind, varied("Sage", tick))
        text = mind.state_json("Sage")
        assert text == json.dumps(mind.get_state("Sage"), sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False)
        assert mind.state_json("Sage") is text  # nothing changed: not encoded again
    mind.set_state("Sage", {"v": 1, "haunt": "the Öde"})
    assert json.loads(mind.state_json("Sage"))["haunt"] == "the Öde"
    assert "Öde" in mind.state_json("Sage")  # as the engine writes it: not \\u-escaped


async def test_state_json_matches_a_full_encode_field_by_field_as_memory_changes() -> None:
    mind = fresh()

    def canonical(agent: str) -> str:
        return json.dumps(mind.get_state(agent), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)

    for tick in range(1, 40):
        for agent in ("Ember", "Sage", "River"):
            await run_calls(mind, varied(agent, tick), respond=fail if tick % 4 == 0 else succeed)
            assert mind.state_json(agent) == canonical(agent), (agent, tick)
    # Fields going back to their defaults drop out; odd strings are escaped as JSON does.
    mind.set_state("Ember", {"v": 1, "haunt": 'the "Old" \\ Öde\n', "target": ["x", 1, 2],
                             "lines": 3})
    assert mind.state_json("Ember") == canonical("Ember")
    mind.set_state("Ember", {"v": 1, "haunt": 'the "Old" \\ Öde\n'})
    assert mind.state_json("Ember") == canonical("Ember")
    assert "target" not in mind.state_json("Ember") and "lines" not in mind.state_json("Ember")
    assert mind.state_json("Nobody") == canonical("Nobody") == '{"v":1}'
