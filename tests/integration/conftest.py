"""What the integration tests on real TLS share: a test certificate authority, and a
server context for `localhost` (and 127.0.0.1) with a client context that trusts it."""

from __future__ import annotations

import ssl

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
