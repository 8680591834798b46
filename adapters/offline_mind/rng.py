"""A fresh, tiny random source for every (seed, agent, tick).

Why not `random.Random("seed:agent:tick")`? Seeding a Mersenne Twister fills
624 words of state and costs ~16 µs, more than the whole budget of an offline
turn (the engine runs 10,000 agent-turns a second). SplitMix64 needs one
integer of state and a handful of multiplications per draw.

Why fresh per turn and never shared? A turn replayed after a crash, from the
same committed world and the same mind state, must make exactly the same calls.
A shared generator would carry draws over from turns that were rolled back; a
generator derived only from (seed, agent, tick) cannot. The agent's name enters
through CRC-32 of its UTF-8 bytes, which (unlike `hash()`) is the same in every
process.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_TO_UNIT = 1.0 / (1 << 53)


def name_key(name: str) -> int:
    """A stable number for an agent's name (the same in every process and run)."""
    return zlib.crc32(name.encode("utf-8"))


def base_of(seed: int, agent_key: int) -> int:
    """The part of a TurnRandom's starting state that does not change with the tick."""
    return seed * _GOLDEN + (agent_key + 1) * _MIX1


class TurnRandom:
    """SplitMix64 seeded from (seed, agent key, tick); see the module docstring."""

    __slots__ = ("_state",)

    def __init__(self, seed: int, agent_key: int, tick: int) -> None:
        self._state = (base_of(seed, agent_key) + (tick + 1) * _MIX2) & _MASK
        self.next64()  # one draw, so nearby seeds do not start with nearby values

    @classmethod
    def at(cls, base: int, tick: int) -> TurnRandom:
        """The same source as TurnRandom(seed, agent_key, tick), from base_of(seed, agent_key)
        worked out once per agent."""
        rng = cls.__new__(cls)
        # The first draw (see __init__) written out: it only moves the state on.
        rng._state = (base + (tick + 1) * _MIX2 + _GOLDEN) & _MASK
        return rng

    def next64(self) -> int:
        self._state = state = (self._state + _GOLDEN) & _MASK
        z = ((state ^ (state >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def random(self) -> float:
        """A float in [0, 1) (next64 written out, as in `chance`)."""
        self._state = state = (self._state + _GOLDEN) & _MASK
        z = ((state ^ (state >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT

    def chance(self, probability: float) -> bool:
        """random() < probability, with next64 written out: the turn's most common draw."""
        self._state = state = (self._state + _GOLDEN) & _MASK
        z = ((state ^ (state >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT < probability

    def below(self, n: int) -> int:
        """An int in [0, n); n must be positive."""
        if n <= 0:
            raise ValueError(f"below() needs a positive bound, got {n}")
        self._state = state = (self._state + _GOLDEN) & _MASK  # next64, written out
        z = ((state ^ (state >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return (z ^ (z >> 31)) % n

    def between(self, low: int, high: int) -> int:
        """An int in [low, high], both ends included (`below`, written out)."""
        n = high - low + 1
        if n <= 0:
            raise ValueError(f"below() needs a positive bound, got {n}")
        self._state = state = (self._state + _GOLDEN) & _MASK
        z = ((state ^ (state >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return low + (z ^ (z >> 31)) % n

    def choice(self, options: Sequence[T]) -> T:
        if not options:
            raise ValueError("choice() needs at least one option")
        return options[self.next64() % len(options)]
