"""adapters/client_shards.py: agents dealt over a few clients, each keeping its own."""

from __future__ import annotations

import pytest

from adapters.client_shards import AGENTS_PER_CLIENT, ClientShards, clients_needed


def test_agents_are_dealt_evenly_in_the_order_they_ask_and_keep_their_client() -> None:
    shards = ClientShards(["a", "b", "c"])
    names = [f"agent{i}" for i in range(7)]
    dealt = [shards.of(n) for n in names]
    assert dealt == ["a", "b", "c", "a", "b", "c", "a"]
    assert [shards.of(n) for n in reversed(names)] == list(reversed(dealt))
    with pytest.raises(ValueError):
        ClientShards([])


def test_one_client_per_few_agents() -> None:
    assert clients_needed(0) == 1 and clients_needed(1) == 1
    assert clients_needed(AGENTS_PER_CLIENT) == 1
    assert clients_needed(AGENTS_PER_CLIENT + 1) == 2
    assert clients_needed(240) == 240 // AGENTS_PER_CLIENT
