"""What the integration tests on real sockets share: a test certificate authority, a
server context for `localhost` (and 127.0.0.1) with a client context that trusts it,
and a port no connection can reach."""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Iterator

import pytest
import trustme


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def tls_pair(authority: trustme.CA) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context for `localhost` and 127.0.0.1, and a client context trusting
    the test CA."""
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("localhost", "127.0.0.1").configure_cert(serving)
    trusting = ssl.create_default_context()
    authority.configure_trust(trusting)
    return serving, trusting


@pytest.fixture
def tls(authority: trustme.CA) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    return tls_pair(authority)


@contextlib.contextmanager
def full_backlog() -> Iterator[int]:
    """A port whose accept queue is full: a new connection hangs in SYN_SENT (later
    SYNs are dropped, not refused)."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(0)
    port = listening.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listening.close()
