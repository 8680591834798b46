"""Seats: agents with `mind: seat`, driven by an outside agent over MCP (README: Seats)."""

from adapters.seats.mind import SeatMind
from adapters.seats.seat import Seat, SeatRefused, SeatState, SeatTurn, TurnEnd

__all__ = ["Seat", "SeatMind", "SeatRefused", "SeatState", "SeatTurn", "TurnEnd"]
