"""The SDKs' own HTTP clients, as Hearth sends through them.

    http = sdk_http_client(anthropic.DefaultAsyncHttpxClient)

The client is the SDK's default, transports and all (its limits, timeouts and the
proxies the environment names); Hearth only shares one TLS context between the many
it makes, and says in one line when the environment names a proxy it cannot use.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable
from typing import TypeVar

import httpx2

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
    proxies the environment names included); ProxyRefused for a proxy setting it cannot
    use, which the SDK would raise as a traceback from deep in httpx."""
    context = shared_tls_context()
    try:
        http = make(verify=context)
    except (ImportError, ValueError, httpx2.InvalidURL) as exc:
        why = str(exc).rstrip(".")
        raise ProxyRefused(f"the proxy the environment names cannot be used ({why}); fix or "
                           "unset ALL_PROXY, HTTPS_PROXY and HTTP_PROXY", EXIT_USAGE) from None
    return http
