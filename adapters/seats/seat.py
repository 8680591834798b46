"""One seat: an agent driven from outside, who holds it, and its turn when one is open.

    seat.claim(holder)                      # every request: this client, this seat
    text = await seat.wait_for_turn(holder) # the perception, once the turn opens
    outcome = await seat.act(holder, call)  # run through the engine, narrated
    seat.end_turn(holder)

The engine's side is a `SeatTurn` (the `MindTurn` the seat mind hands it): it waits
for the client's next call, one at a time, until the client ends the turn, the turn's
`turn_seconds` run out, or the run stops; then the turn passes (inaction is always
valid) and the world goes on. A seat nobody holds passes at once.

A holder is one MCP session (its `Mcp-Session-Id`), or, for a client on the
sessionless 2026-07-28 protocol, the token itself. It keeps the seat while it is
waiting for its turn or has been heard from within `turn_seconds`; a second session
is refused until then, or until the first ends.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.mind import ToolCall, ToolOutcome, TurnStart

POLL_SECONDS = 0.25
"""How often a waiting turn looks whether the run is stopping."""


class SeatState(enum.Enum):
    EMPTY = "empty"
    """Nobody holds the seat: its turns pass at once."""
    WAITING = "waiting"
    """Its client is waiting for its turn (in wait_for_turn)."""
    HELD = "held"
    """Its client holds it: in its turn, or heard from within turn_seconds."""


class TurnEnd(enum.Enum):
    """How a seat's turn ended, kept in the turn's record."""

    ENDED = "end_turn"
    TIME = "time"
    EMPTY = "empty"
    STOPPING = "stopping"
    ENGINE = "engine"
    """The engine ended it: the action limit, or the turn loop's own end."""


class SeatRefused(Exception):
    """A request the seat cannot take; the message says why, in one line."""


@dataclass
class _Call:
    call: ToolCall
    answer: asyncio.Future[ToolOutcome]


_END = object()


class SeatTurn:
    """The engine's side of one turn of a seat (services.mind.MindTurn)."""

    def __init__(self, seat: Seat, start: TurnStart, stopping: Callable[[], bool]) -> None:
        self.seat = seat
        self.start = start
        self.stopping = stopping
        self.deadline = seat.clock() + seat.turn_seconds
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.answering: _Call | None = None
        self.over = False
        self.shown_to: str | None = None
        """The holder wait_for_turn showed this turn to: the only one who may act in it."""
        self.end: TurnEnd | None = None
        self.calls = 0

    @property
    def shown(self) -> bool:
        return self.shown_to is not None

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        self._answer(outcomes)
        while True:
            left = self.deadline - self.seat.clock()
            if left <= 0:
                return self._ended(TurnEnd.TIME)
            if self.queue.empty() and self.seat.state() is SeatState.EMPTY:
                return self._ended(TurnEnd.EMPTY)  # nobody holds it (or its session ended)
            if self.stopping():
                return self._ended(TurnEnd.STOPPING)
            try:
                item = await asyncio.wait_for(self.queue.get(), min(left, POLL_SECONDS))
            except TimeoutError:
                continue
            if item is _END:
                return self._ended(TurnEnd.ENDED)
            self.answering = item
            self.calls += 1
            return (item.call,)

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        self._answer(outcomes)
        if self.end is None:
            self.end = TurnEnd.ENGINE
        self.over = True
        self.seat.turn_over(self)
        while not self.queue.empty():  # asked for after the turn ended: not run
            item = self.queue.get_nowait()
            if isinstance(item, _Call) and not item.answer.done():
                item.answer.set_exception(SeatRefused(
                    f"{self.seat.name}'s turn ended before this call ran; it was not run. "
                    "Call wait_for_turn for the next one"))

    def record(self) -> dict[str, Any]:
        return {"mind": "seat", "ended": (self.end or TurnEnd.ENGINE).value,
                "shown": self.shown}

    def _answer(self, outcomes: Sequence[ToolOutcome]) -> None:
        pending, self.answering = self.answering, None
        if pending is None or pending.answer.done():
            return
        mine = [o for o in outcomes if o.call_id == pending.call.id]
        if mine:
            pending.answer.set_result(mine[0])
        else:
            pending.answer.set_exception(SeatRefused("the call was not run"))

    def _ended(self, end: TurnEnd) -> Sequence[ToolCall]:
        self.end = end
        self.over = True
        return ()


@dataclass
class Seat:
    """One agent's seat, on the event loop of the world's engine."""

    name: str
    turn_seconds: float
    clock: Callable[[], float] = time.monotonic
    on_change: Callable[[], None] = lambda: None
    holder: str | None = None
    seen: float = 0.0
    waiting: int = 0
    turn: SeatTurn | None = None
    passed: int = 0
    """Turns that passed because no call came in time, since its holder last had one."""
    told: set[str] = field(default_factory=set)
    """Holders already told who the agent is (its system prompt goes with the first turn)."""
    last_shown: dict[str, int] = field(default_factory=dict)
    """Each holder's latest turn (its tick): what a late call is told has ended."""
    closed: bool = False
    _opened: asyncio.Event | None = None

    @property
    def wait_cap(self) -> float:
        """How long one wait_for_turn waits before it says "not yet": within the hold,
        so a live client that keeps waiting never loses its seat."""
        return max(0.1, min(60.0, self.turn_seconds / 2))

    def state(self) -> SeatState:
        if not self._held():
            return SeatState.EMPTY
        return SeatState.WAITING if self.waiting else SeatState.HELD

    def _held(self) -> bool:
        """Held while its client waits for its turn, is in a turn it was shown, or was
        heard from within turn_seconds; a session that ended holds nothing."""
        if self.holder is None:
            return False
        turn = self.turn
        in_turn = turn is not None and turn.shown_to == self.holder and not turn.over
        return self.waiting > 0 or in_turn or self.clock() - self.seen <= self.turn_seconds

    def claim(self, holder: str) -> None:
        """`holder` may use the seat now; a second session is refused while it is held."""
        if self.closed:
            raise SeatRefused("the world has stopped; its seats open again when it runs")
        if self.holder != holder and self._held():
            raise SeatRefused(
                f"{self.name}'s seat is held by another session; it frees when that session "
                f"ends or is silent for {self.turn_seconds:g} s")
        was = self.state()
        if self.holder != holder or not self._held():  # a new hold: told who it is again
            self.told.discard(holder)
        if self.holder != holder:
            self.holder, self.passed = holder, 0
        self.seen = self.clock()
        if self.state() is not was:
            self.on_change()

    def release(self, holder: str) -> None:
        """The holder's session ended: the seat is free at once."""
        if self.holder == holder:
            self.holder = None
            self.on_change()

    def open_turn(self, turn: SeatTurn) -> None:
        self.turn = turn
        self._event().set()

    def turn_over(self, turn: SeatTurn) -> None:
        if self.turn is turn:
            self.turn = None
            self._event().clear()
        if turn.end is TurnEnd.TIME and turn.calls == 0:
            self.passed += 1

    async def wait_for_turn(self, holder: str) -> SeatTurn | None:
        """This seat's open turn, once there is one (None: none came within the cap)."""
        self.claim(holder)
        if self.turn is not None and not self.turn.over:
            return self.turn
        self.waiting += 1
        self.on_change()
        try:
            await asyncio.wait_for(self._event().wait(), self.wait_cap)
        except TimeoutError:
            pass
        finally:
            self.waiting -= 1
            self.seen = self.clock()
            self.on_change()
        if self.closed:
            raise SeatRefused("the world has stopped; its seats open again when it runs")
        turn = self.turn
        return turn if turn is not None and not turn.over else None

    async def act(self, holder: str, call: ToolCall) -> ToolOutcome:
        """Run `call` in the seat's open turn and return what came of it."""
        turn = self._current(holder)
        answer: asyncio.Future[ToolOutcome] = asyncio.get_running_loop().create_future()
        turn.queue.put_nowait(_Call(call, answer))
        try:
            return await answer
        finally:
            self.seen = self.clock()

    def end_turn(self, holder: str) -> None:
        self._current(holder).queue.put_nowait(_END)

    def close(self) -> None:
        """The world stops: every wait ends, no call is taken."""
        self.closed = True
        self._event().set()

    def _current(self, holder: str) -> SeatTurn:
        """The open turn, if wait_for_turn showed it to `holder`: a call never lands in a
        turn its client has not seen (a late call after a turn passed, say)."""
        self.claim(holder)
        turn = self.turn
        if turn is not None and not turn.over and turn.shown_to == holder:
            return turn
        if turn is not None and not turn.over:
            raise SeatRefused(f"{self.name}'s turn at tick {turn.start.tick} has begun and you "
                              "have not seen it; call wait_for_turn first")
        last = self.last_shown.get(holder)
        if last is not None:
            raise SeatRefused(f"{self.name}'s turn at tick {last} has ended; nothing was done "
                              "by this call. Call wait_for_turn for the next")
        raise SeatRefused(f"it is not {self.name}'s turn; call wait_for_turn first")

    def show(self, holder: str, turn: SeatTurn) -> None:
        """`turn` was shown to `holder`: theirs to act in until it ends."""
        turn.shown_to = holder
        self.last_shown[holder] = turn.start.tick

    def _event(self) -> asyncio.Event:
        if self._opened is None:
            self._opened = asyncio.Event()
        return self._opened
