"""A seat (adapters/seats): an agent driven from outside, one call at a time, through the
engine's own turn loop (services.turn_loop.run_turn) with a small execute/narrate pair.

Clock-dependent cases use a fake clock (`Seat.clock`) and a short poll, so nothing here
waits long; every await is bounded, so a bug cannot hang the suite."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from adapters.seats import seat as seat_module
from adapters.seats.mind import SeatMind
from adapters.seats.seat import POLL_SECONDS, Seat, SeatRefused, SeatState, SeatTurn
from core.actions import ActionResult
from core.perception import Perception
from core.terrain import Terrain, Weather
from core.types import AgentName, Position
from services.mind import ToolCall, TurnStart
from services.turn_loop import ACTION_LIMIT, ENDED, TurnLog, actions_left_text, run_turn

T = TypeVar("T")

EMBER = AgentName("Ember")
SEEN = Perception(
    agent=EMBER, tick=3, position=Position(2, 5), time_text="day 1, 11:00 (morning)",
    period="morning", weather=Weather.CLEAR, vision_radius=3, grid_view="@",
    narrative="A fox watches you from the reeds.", inventory_text="You carry nothing.",
    journey_text=None, visible_agents_text="", conversation_text=None,
    invitation_text=None, cells=(), agents=(), landmarks=(), objects=(), inventory=(),
    standing_on=Terrain.GRASS, inside_structure=False, on_journey=False,
    in_conversation_with=(), pending_invitation_from=None)
TURN_SECONDS = 0.3
LIMIT = 1.0
"""No await in these tests may take longer than this."""


def start(tick: int = 3, max_actions: int = 8) -> TurnStart:
    return TurnStart(EMBER, tick, SEEN, (), max_actions)


async def within(aw: Awaitable[T], seconds: float = LIMIT) -> T:
    return await asyncio.wait_for(aw, seconds)


class Clock:
    """A clock that moves only when told."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class World:
    """What the engine hands run_turn: runs a call, then narrates it."""

    def __init__(self) -> None:
        self.ran: list[ToolCall] = []
        self.running = 0
        self.most_at_once = 0

    async def execute(self, call: ToolCall) -> ActionResult:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(0.01)
            self.ran.append(call)
            return ActionResult.ok(f"{call.name} {dict(call.arguments)} done",
                                   data={"call": call.id})
        finally:
            self.running -= 1

    async def narrate(self, result: ActionResult, call: ToolCall) -> str:
        return f"You did it: {result.message}."


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def quick_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiting turns look at the (fake) clock often, so a test need not wait for it."""
    monkeypatch.setattr(seat_module, "POLL_SECONDS", 0.01)


def ember(mind: SeatMind) -> Seat:
    return mind.seats["Ember"]


async def open_turn(mind: SeatMind, holder: str, world: World, tick: int = 3,
                    max_actions: int = 8, show: bool = True,
                    ) -> tuple[SeatTurn, asyncio.Task[TurnLog]]:
    """`holder` waits for its turn, the engine begins one: the turn the holder got, and
    the engine's run_turn still running."""
    seat = ember(mind)
    waiting = asyncio.create_task(seat.wait_for_turn(holder))
    await asyncio.sleep(0)  # the holder is waiting before the turn opens
    assert seat.state() is SeatState.WAITING
    engine = asyncio.create_task(
        run_turn(mind, start(tick, max_actions), world.execute, world.narrate))
    turn = await within(waiting)
    assert isinstance(turn, SeatTurn) and not turn.over
    if show:
        seat.show(holder, turn)  # as wait_for_turn's answer does (SeatMind.turn_text)
    return turn, engine


async def test_an_empty_seat_passes_its_turn_at_once(world: World) -> None:
    mind = SeatMind(["Ember"], TURN_SECONDS)
    began = time.monotonic()
    log = await within(run_turn(mind, start(), world.execute, world.narrate), 0.2)
    assert time.monotonic() - began < 0.1
    assert log.actions == () and log.ended == ENDED and log.error is None
    assert dict(log.record) == {"mind": "seat", "ended": "empty", "shown": False}
    assert world.ran == []
    seat = ember(mind)
    assert seat.turn is None and seat.passed == 0 and mind.states() == {"Ember": "empty"}


async def test_a_holder_gets_the_turn_acts_one_call_at_a_time_and_ends_it(
        world: World) -> None:
    changes: list[dict[str, str]] = []
    mind = SeatMind(["Ember"], 5.0, on_change=lambda: changes.append(mind.states()))
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world, max_actions=5)
    assert seat.turn is turn and seat.state() is SeatState.HELD
    assert {"Ember": "waiting"} in changes and changes[-1] == {"Ember": "held"}

    walk = ToolCall("c1", "walk", {"direction": "north"})
    first = await within(seat.act("s1", walk))
    assert world.ran == [walk] and first.call_id == "c1" and first.name == "walk"
    assert first.success and dict(first.data) == {"call": "c1"}

    say = ToolCall("c2", "say", {"text": "hello"})
    rest = ToolCall("c3", "rest", {})
    second, third = await within(asyncio.gather(seat.act("s1", say), seat.act("s1", rest)))
    assert world.ran == [walk, say, rest] and world.most_at_once == 1
    assert (second.call_id, third.call_id) == ("c2", "c3")
    assert not engine.done()

    seat.end_turn("s1")
    log = await within(engine)
    assert log.ended == ENDED and log.record["ended"] == "end_turn"
    assert [(a.tool, dict(a.arguments)) for a in log.actions] == [
        (c.name, dict(c.arguments)) for c in (walk, say, rest)]
    said = [a.narration for a in log.actions]
    assert said[0] == "You did it: walk {'direction': 'north'} done."
    assert first.text == said[0]  # 4 of 5 calls left: the narration alone
    assert second.text == f"{said[1]}\n\n{actions_left_text(3, 5)}"
    assert third.text == f"{said[2]}\n\n{actions_left_text(2, 5)}"
    assert turn.over and seat.turn is None and turn.calls == 3


async def test_a_silent_holder_passes_after_turn_seconds_and_hears_of_it_once(
        world: World, quick_poll: None) -> None:
    mind = SeatMind(["Ember"], TURN_SECONDS)
    seat = ember(mind)
    seat.clock = clock = Clock()
    turn, engine = await open_turn(mind, "s1", world)
    text = mind.turn_text(seat, "s1", turn)
    assert not any("News:" in part for part in text)

    clock.now += 0.2
    seat.claim("s1")  # the client is heard from (any request), but makes no call
    await asyncio.sleep(0.05)
    assert not engine.done()  # the turn waits while its time lasts
    clock.now += 0.15  # past the turn's time, within the hold
    log = await within(engine)
    assert log.actions == () and world.ran == []
    assert log.record["ended"] == "time" and seat.passed == 1
    with pytest.raises(SeatRefused, match="turn at tick 3 has ended"):
        seat.end_turn("s1")

    turn, engine = await open_turn(mind, "s1", world, tick=4)
    text = mind.turn_text(seat, "s1", turn)
    news = [part for part in text if "News:" in part]
    assert len(news) == 1 and "\n".join(text).count("News:") == 1
    assert news[0].startswith("News: 1 of your") and "passed with nothing done" in news[0]
    assert text[-1] == SEEN.as_text()
    assert seat.passed == 0
    assert not any("News:" in part for part in mind.turn_text(seat, "s1", turn))
    seat.end_turn("s1")
    log = await within(engine)
    assert log.record["ended"] == "end_turn" and seat.passed == 0


async def test_a_turn_that_runs_out_after_a_call_is_not_news(
        world: World, quick_poll: None) -> None:
    mind = SeatMind(["Ember"], TURN_SECONDS)
    seat = ember(mind)
    seat.clock = clock = Clock()
    turn, engine = await open_turn(mind, "s1", world)
    clock.now += 0.1
    walk = ToolCall("c1", "walk", {"direction": "north"})
    await within(seat.act("s1", walk))
    clock.now += 0.25  # past the turn's time, within the hold
    log = await within(engine)
    assert log.record["ended"] == "time" and world.ran == [walk] and len(log.actions) == 1
    assert seat.passed == 0  # the client did act: no turn passed unheard
    turn, engine = await open_turn(mind, "s1", world, tick=4)
    assert not any("News:" in part for part in mind.turn_text(seat, "s1", turn))
    seat.end_turn("s1")
    await within(engine)


async def test_a_holder_silent_from_the_turns_start_passes_on_time(
        world: World, quick_poll: None) -> None:
    mind = SeatMind(["Ember"], TURN_SECONDS)
    seat = ember(mind)
    seat.clock = clock = Clock()
    turn, engine = await open_turn(mind, "s1", world)
    mind.turn_text(seat, "s1", turn)
    clock.now += TURN_SECONDS + 0.001  # the poll that finds the time up comes just after
    log = await within(engine)
    assert log.actions == () and world.ran == []
    assert log.record["ended"] == "time" and seat.passed == 1


async def test_a_second_session_is_refused_while_the_first_holds() -> None:
    clock = Clock()
    changes: list[SeatState] = []
    seat = Seat("Ember", 0.25, clock=clock)  # 0.25: exact in binary, so is the boundary
    seat.on_change = lambda: changes.append(seat.state())
    seat.claim("s1")
    assert seat.holder == "s1" and seat.state() is SeatState.HELD and changes == [
        SeatState.HELD]
    seat.claim("s1")  # the holder again: nothing changes
    assert changes == [SeatState.HELD]
    with pytest.raises(SeatRefused, match="held by another session") as refused:
        seat.claim("s2")
    assert "\n" not in str(refused.value)
    clock.now += 0.25  # silent for exactly turn_seconds: still held
    with pytest.raises(SeatRefused):
        seat.claim("s2")
    assert seat.holder == "s1"

    clock.now += 0.01  # silent past turn_seconds: free
    assert seat.state() is SeatState.EMPTY
    seat.passed = 2
    seat.claim("s2")
    assert seat.holder == "s2" and seat.passed == 0  # news of s1's turns is not s2's
    with pytest.raises(SeatRefused):
        seat.claim("s1")

    seat.release("s1")  # not the holder: nothing happens
    assert seat.holder == "s2"
    with pytest.raises(SeatRefused):
        seat.claim("s1")
    seat.release("s2")  # its session ended: free at once
    assert seat.holder is None and seat.state() is SeatState.EMPTY
    seat.claim("s1")
    assert seat.holder == "s1"


async def test_a_waiting_holder_keeps_its_seat_however_long_it_waits() -> None:
    clock = Clock()
    seat = Seat("Ember", TURN_SECONDS, clock=clock)
    waiting = asyncio.create_task(seat.wait_for_turn("s1"))
    await asyncio.sleep(0)
    clock.now += 10 * TURN_SECONDS
    assert seat.state() is SeatState.WAITING
    with pytest.raises(SeatRefused):
        seat.claim("s2")
    assert await within(waiting) is None  # no turn came within its cap: "not yet"
    assert seat.state() is SeatState.HELD  # heard from just now
    with pytest.raises(SeatRefused):
        seat.claim("s2")


async def test_calls_and_end_turn_out_of_turn_are_refused_and_nothing_runs(
        world: World) -> None:
    mind = SeatMind(["Ember"], 5.0)
    seat = ember(mind)
    walk = ToolCall("c1", "walk", {"direction": "north"})
    with pytest.raises(SeatRefused, match="not Ember's turn; call wait_for_turn first"):
        await within(seat.act("s1", walk))
    with pytest.raises(SeatRefused, match="not Ember's turn"):
        seat.end_turn("s1")

    turn, engine = await open_turn(mind, "s1", world)
    with pytest.raises(SeatRefused, match="held by another session"):
        await within(seat.act("s2", walk))
    with pytest.raises(SeatRefused, match="held by another session"):
        seat.end_turn("s2")
    assert turn.queue.empty()
    await asyncio.sleep(0.05)
    assert not engine.done() and world.ran == []

    seat.end_turn("s1")
    log = await within(engine)
    assert log.actions == () and log.record["ended"] == "end_turn"
    with pytest.raises(SeatRefused, match="turn at tick 3 has ended; nothing was done"):
        await within(seat.act("s1", walk))
    with pytest.raises(SeatRefused, match="turn at tick 3 has ended"):
        seat.end_turn("s1")
    assert world.ran == [] and turn.queue.empty()


async def test_a_call_past_the_action_limit_is_refused_never_run(world: World) -> None:
    mind = SeatMind(["Ember"], 5.0)
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world, max_actions=1)
    walk = ToolCall("c1", "walk", {"direction": "north"})
    say = ToolCall("c2", "say", {"text": "hello"})
    first, second = await within(asyncio.gather(
        seat.act("s1", walk), seat.act("s1", say), return_exceptions=True))
    log = await within(engine)
    assert world.ran == [walk] and [a.tool for a in log.actions] == ["walk"]
    assert log.ended == ACTION_LIMIT and log.record["ended"] == "engine"
    assert not isinstance(first, BaseException)
    assert first.text == f"{log.actions[0].narration}\n\n{actions_left_text(0, 1)}"
    assert isinstance(second, SeatRefused) and "not run" in str(second)
    assert turn.queue.empty() and seat.turn is None
    with pytest.raises(SeatRefused, match="turn at tick 3 has ended"):
        await within(seat.act("s1", say))
    assert world.ran == [walk]


async def test_a_call_made_after_end_turn_is_refused_never_run(world: World) -> None:
    mind = SeatMind(["Ember"], 5.0)
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world)
    walk = ToolCall("c1", "walk", {"direction": "north"})
    seat.end_turn("s1")
    late = asyncio.create_task(seat.act("s1", walk))  # queued behind the end, this instant
    with pytest.raises(SeatRefused, match="not run"):
        await within(late)
    log = await within(engine)
    assert log.actions == () and world.ran == [] and log.record["ended"] == "end_turn"


async def test_a_holder_whose_session_ends_mid_turn_passes_it(world: World) -> None:
    mind = SeatMind(["Ember"], 5.0)
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world)
    seat.release("s1")
    log = await within(engine, POLL_SECONDS + 0.5)
    assert log.actions == () and log.record["ended"] == "empty" and seat.passed == 0


async def test_stopping_ends_a_waiting_turn_promptly(world: World) -> None:
    mind = SeatMind(["Ember"], 30.0)
    stop: dict[str, Any] = {"now": False}
    mind.stopping = lambda: stop["now"]
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world)
    await asyncio.sleep(0.05)
    assert not engine.done()
    stop["now"] = True
    began = time.monotonic()
    log = await within(engine, POLL_SECONDS + 0.5)
    assert time.monotonic() - began < POLL_SECONDS + 0.2
    assert log.actions == () and world.ran == [] and log.record["ended"] == "stopping"
    assert seat.turn is None and seat.passed == 0


async def test_turn_text_says_who_the_agent_is_once_per_holder(world: World) -> None:
    mind = SeatMind(["Ember"], TURN_SECONDS, personalities={"Ember": "Ember loves the sea."})
    seat = ember(mind)
    turn, engine = await open_turn(mind, "s1", world, show=False)
    assert turn.record()["shown"] is False
    with pytest.raises(SeatRefused, match="has begun and you have not seen it"):
        seat.end_turn("s1")  # a turn is acted in only once its client has seen it
    first = mind.turn_text(seat, "s1", turn)
    assert first[0].startswith("You are Ember.") and "Ember loves the sea." in first[0]
    assert "0.3 seconds have passed" in first[0]  # the seat's own turn terms
    assert first[-1] == SEEN.as_text()
    assert any(part.startswith("Tick 3: your turn. You may make up to 8 tool calls")
               for part in first)
    assert turn.record()["shown"] is True
    seat.end_turn("s1")
    await within(engine)

    turn, engine = await open_turn(mind, "s1", world, tick=4)
    later = mind.turn_text(seat, "s1", turn)
    assert not any("You are Ember." in part for part in later)
    assert later[0].startswith("Tick 4: your turn.") and later[-1] == SEEN.as_text()
    assert len(later) == 2
    seat.end_turn("s1")
    await within(engine)

    seat.release("s1")  # a new session is told again who it is
    turn, engine = await open_turn(mind, "s2", world, tick=5)
    again = mind.turn_text(seat, "s2", turn)
    assert again[0].startswith("You are Ember.") and again[-1] == SEEN.as_text()
    seat.end_turn("s2")
    await within(engine)


async def test_close_ends_a_wait_for_turn_and_takes_no_more_requests() -> None:
    mind = SeatMind(["Ember", "Ash"], 5.0)  # a wait would last 2.5 s unless closed
    seat = ember(mind)
    waiting = asyncio.create_task(seat.wait_for_turn("s1"))
    await asyncio.sleep(0)
    assert seat.state() is SeatState.WAITING
    began = time.monotonic()
    mind.close()
    with pytest.raises(SeatRefused, match="the world has stopped"):
        await within(waiting, 0.5)
    assert time.monotonic() - began < 0.2 and seat.waiting == 0
    for each in mind.seats.values():
        assert each.closed
        with pytest.raises(SeatRefused, match="the world has stopped"):
            await within(each.wait_for_turn("s1"), 0.5)
        with pytest.raises(SeatRefused, match="the world has stopped"):
            await within(each.act("s1", ToolCall("c1", "walk", {})), 0.5)


async def test_a_late_call_never_lands_in_a_turn_its_client_has_not_seen(
        world: World, quick_poll: None) -> None:
    """A client that thinks past turn_seconds: its turn passed, the next one opened, and
    its call (meant for the turn that passed) is refused, not run in the new one."""
    mind = SeatMind(["Ember"], TURN_SECONDS)
    seat = ember(mind)
    seat.clock = clock = Clock()
    turn, engine = await open_turn(mind, "s1", world)
    clock.now += TURN_SECONDS + 0.01
    assert (await within(engine)).record["ended"] == "time"
    seat.claim("s1")  # heard from (its late call arriving, say): it holds the seat still
    later = asyncio.create_task(run_turn(mind, start(4), world.execute, world.narrate))
    await asyncio.sleep(0.05)
    assert seat.turn is not None and seat.turn.start.tick == 4 and not seat.turn.shown
    walk = ToolCall("late", "walk", {"direction": "north"})
    with pytest.raises(SeatRefused, match="tick 4 has begun and you have not seen it"):
        await within(seat.act("s1", walk))
    with pytest.raises(SeatRefused, match="has begun"):
        seat.end_turn("s1")
    assert world.ran == [] and seat.turn.queue.empty()
    clock.now += TURN_SECONDS + 0.01
    log = await within(later)
    assert log.actions == () and log.record["shown"] is False
