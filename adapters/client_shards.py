"""Agents spread over a few API clients, each agent always on the same one.

    shards = ClientShards([client, *more])
    shards.of("Ember")    # the same client for Ember every time

A client's connection pool looks through all its connections each time a request
is placed or ends (httpcore, which asks every idle connection's socket whether it
is still open), so one pool holding hundreds of requests in flight spends more CPU
placing them than Hearth spends on the turns (half of a 240-agent tick's, measured
with `python -m bench minds`). With 32 agents a pool that was still a tenth of
Hearth's CPU in that tick; with 8 it is a twentieth. More clients cost nothing
per request, and little to make (they share one TLS context: claude_setup.py).
Agents are dealt to the clients in the order they first ask, so shards fill evenly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

AGENTS_PER_CLIENT = 8
"""Agents whose requests share one client's connection pool."""

C = TypeVar("C")


def clients_needed(agents: int) -> int:
    """How many clients `agents` agents are spread over (at least one)."""
    return max(1, -(-agents // AGENTS_PER_CLIENT))


class ClientShards(Generic[C]):
    def __init__(self, clients: Sequence[C]) -> None:
        if not clients:
            raise ValueError("at least one client is needed")
        self.clients = tuple(clients)
        self._dealt: dict[str, C] = {}

    def of(self, agent: str) -> C:
        client = self._dealt.get(agent)
        if client is None:
            client = self.clients[len(self._dealt) % len(self.clients)]
            self._dealt[agent] = client
        return client
