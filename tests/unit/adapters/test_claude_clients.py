"""The clients Hearth makes for Claude (adapters/claude_setup.py `new_client`): many are
cheap, they share one TLS context, and each is the SDK's own client over real HTTP."""

from __future__ import annotations

import pytest

from adapters.claude_setup import new_client
from tests.messages_standin import StrictMessagesApi


def _tls_of(client: object) -> object:
    # The SDK keeps its HTTP client as `_client`; httpx's transport keeps its pool's
    # context: no public attribute tells which context a client uses.
    transport = client._client._transport  # type: ignore[attr-defined]
    return transport._pool._ssl_context


async def test_every_client_shares_one_tls_context() -> None:
    """A client for every few agents (adapters/client_shards.py) must not read the
    system's certificates again each time."""
    clients = [new_client("test-key", 30.0) for _ in range(3)]
    try:
        contexts = {id(_tls_of(c)) for c in clients}
        assert len(contexts) == 1
        assert _tls_of(clients[0]) is not None
    finally:
        for c in clients:
            await c.close()


async def test_a_new_client_asks_over_http_without_the_sdks_retries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    api = StrictMessagesApi()
    api.faults.append(529)  # the SDK would retry this itself unless its retries are off
    with api.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        client = new_client("test-key", 30.0)
        try:
            assert client.max_retries == 0
            with pytest.raises(Exception) as refused:
                await client.messages.create(
                    model="claude-sonnet-5-5", max_tokens=64,
                    messages=[{"role": "user", "content": "Hello"}])
            assert getattr(refused.value, "status_code", None) == 529
            reply = await client.messages.create(
                model="claude-sonnet-5-5", max_tokens=64,
                messages=[{"role": "user", "content": "Hello"}])
        finally:
            await client.close()
    assert reply.role == "assistant" and reply.content
    assert len(api.served) == 1 and [r.status for r in api.refused] == [529]
