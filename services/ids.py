"""Fresh ids for objects, items and structures, reproducible from where they were made.

    ids = IdSource()
    ids.reseed(world_seed, tick, "Ember")   # as a turn begins, in the turn's own task
    ids("sign")                              # 'sign-3f0a…': (seed, tick, Ember, 1st)

An id depends only on the turn that made it: the world's seed, the tick, the agent
(or "opening" for a tick's opening phases) and its order within that turn. Turns of
clusters far apart run at once, each in its own asyncio task, and await the model in
between their ids; so the sequence a `reseed` starts belongs to the task that started
it (a ContextVar: each task has its own value), never to whichever turn reseeded last.
A run resumed after a crash, or lived again with the model's replies in another order,
mints exactly the ids the first one did, and a turn taken again mints the ids of its
own earlier attempt, which was never committed, and no one else's.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from contextvars import ContextVar

_serial = itertools.count()


class IdSource:
    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        """Used where nothing was reseeded (worlds being set up, tests)."""
        self._turn: ContextVar[tuple[bytes, int] | None] = ContextVar(
            f"hearth_ids_{next(_serial)}", default=None)
        """(the turn's key, ids minted so far), per task."""

    def reseed(self, *parts: object) -> None:
        """Start the sequence of one turn or phase, in this task (and the tasks it
        starts from now on)."""
        self._turn.set((":".join(str(p) for p in parts).encode(), 0))

    def __call__(self, prefix: str) -> str:
        turn = self._turn.get()
        if turn is None:
            return f"{prefix}-{self._rng.getrandbits(48):012x}"
        key, count = turn[0], turn[1] + 1
        self._turn.set((key, count))
        # A keyed hash of (parts, n): 48 bits, cheap for a turn's first id.
        digest = hashlib.blake2b(b"%s:%d" % (key, count), digest_size=6)
        return f"{prefix}-{digest.hexdigest()}"
