"""The SDKs' own HTTP clients, as Hearth sends through them.

    http = sdk_http_client(anthropic.DefaultAsyncHttpxClient)

The client is the SDK's default (its limits, timeouts and the proxies the environment
names). Its direct requests go through adapters/http1.py (HTTP/1.1 without httpcore's
pool and h11: most of a request's cost on the loop); requests through a proxy keep
httpx's transports, their pools on asyncio's own streams (adapters/asyncio_network.py).
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable
from typing import Any, TypeVar

import httpx2

from adapters.asyncio_network import use_asyncio_network
from adapters.http1 import Http1, use_http1
from services.command_errors import EXIT_USAGE, CliError


class ProxyRefused(CliError):
    """The environment names a proxy the SDKs' HTTP client cannot use (a SOCKS proxy
    without socksio, an unknown scheme, a malformed URL): one line, exit 2."""


H = TypeVar("H")


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The TLS context every model client shares: the one httpx makes by default
    (`SSL_CERT_FILE` and all), read from the system's certificates once, not per client
    (some 20 ms and their memory each)."""
    return httpx2.create_ssl_context()


def sdk_http_client(make: Callable[..., H]) -> H:
    """`make(verify=shared_tls_context())`, an SDK's own default HTTP client (the
    proxies the environment names included), its direct requests on Http1 and its
    proxies' pools on AsyncioNetwork; ProxyRefused for a proxy setting it cannot use,
    which the SDK would raise as a traceback from deep in httpx."""
    context = shared_tls_context()
    try:
        http = make(verify=context)
    except (ImportError, ValueError, httpx2.InvalidURL) as exc:
        why = str(exc).rstrip(".")
        raise ProxyRefused(f"the proxy the environment names cannot be used ({why}); fix or "
                           "unset ALL_PROXY, HTTPS_PROXY and HTTP_PROXY", EXIT_USAGE) from None
    use_http1(http, context)
    use_asyncio_network(http)
    return http


async def warm_connections(client: Any, count: int) -> int:
    """Open `count` connections from an SDK client (Anthropic's or OpenAI's) to its
    endpoint before its agents' first requests (Http1.warm): how many opened; none for
    a client whose requests do not go through Http1 (a proxy, another make). The SDKs
    keep their HTTP client as `_client`; a test fails if a release moves it."""
    transport = getattr(getattr(client, "_client", None), "_transport", None)
    if not isinstance(transport, Http1):
        return 0
    return await transport.warm(client.base_url, count)
