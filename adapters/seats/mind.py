"""The seat mind: the `Mind` for agents whose decisions come from outside, over MCP.

    seats = SeatMind(["Ember"], turn_seconds=120, personalities={"Ember": "..."})
    engine = await HearthEngine.open(..., minds={"Ember": seats})
    server = SeatServer(seats, tokens, ...)   # adapters/seats/server.py

Each turn the engine gives a seat opens on its `Seat` (adapters/seats/seat.py) and
waits for the client's calls. What the client reads is what a Claude agent would:
the same system prompt (once per session), the same perception text, the same
narrated outcome of each call. The mind remembers nothing between turns: a seat's
memory is its client's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from adapters.claude_mind.prompt import system_prompt
from adapters.seats.seat import Seat, SeatTurn
from core.types import AgentName
from services.mind import MindDefaults, TurnStart

SEAT_TURN_ENDS = ("- A turn begins when wait_for_turn returns it, and ends when you call "
                  "end_turn, when you have made every call a turn allows, or when {seconds} "
                  "seconds have passed; a turn you let pass is fine. You may end a turn "
                  "without acting.")


class SeatMind(MindDefaults):
    """Speaks for every seat of a world; one `Seat` each."""

    kind = "seat"

    def __init__(self, names: Iterable[str], turn_seconds: float,
                 personalities: Mapping[str, str] | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self.turn_seconds = turn_seconds
        self.personalities = dict(personalities or {})
        self.seats = {name: Seat(name, turn_seconds, on_change=self._changed)
                      for name in names}
        self.on_change = on_change
        self.stopping: Callable[[], bool] = lambda: False

    def begin(self, start: TurnStart) -> SeatTurn:
        seat = self.seats[start.agent]
        turn = SeatTurn(seat, start, lambda: self.stopping())
        seat.open_turn(turn)
        return turn

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return {}

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        return None

    def states(self) -> dict[str, str]:
        """Each seat as a watcher sees it: empty, waiting or held."""
        return {name: seat.state().value for name, seat in self.seats.items()}

    def close(self) -> None:
        for seat in self.seats.values():
            seat.close()

    def turn_text(self, seat: Seat, holder: str, turn: SeatTurn) -> list[str]:
        """What wait_for_turn returns: who the agent is (a session's first turn), news of
        turns that passed, the turn's terms, then the perception as Claude reads it."""
        start = turn.start
        parts: list[str] = []
        if holder not in seat.told:
            seat.told.add(holder)
            parts.append(system_prompt(
                start.agent, self.personalities.get(start.agent, ""),
                SEAT_TURN_ENDS.format(seconds=f"{self.turn_seconds:g}")))
        if seat.passed:
            parts.append(f"News: {seat.passed} of your turns passed with nothing done "
                         "while no call came.")
            seat.passed = 0
        parts.append(f"Tick {start.tick}: your turn. You may make up to {start.max_actions} "
                     f"tool calls; call end_turn when you are done (the turn passes by "
                     f"itself after {self.turn_seconds:g} seconds).")
        parts.append(start.perception.as_text())
        seat.show(holder, turn)
        return parts

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
