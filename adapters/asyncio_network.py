"""The sockets under the SDKs' HTTP clients, on asyncio's own transports.

    client = anthropic.DefaultAsyncHttpxClient(verify=context)
    use_asyncio_network(client)     # every connection pool it has now uses AsyncioNetwork

Both SDKs send through httpx2 and httpcore2, whose connection pools reach the network
through a pluggable `AsyncNetworkBackend` (httpcore's documented extension point).
The default one goes through anyio, which wraps every read and write of every request
in cancel scopes and checkpoints: on a 240-agent tick with 1 s replies that was about
a sixth of Hearth's CPU (`python -m bench minds`, py-spy), and the tick waits on that
CPU, because each agent's next request is sent only once its last reply has been read.
anyio also yields to the event loop between a request's headers and its body, so a
busy loop sent the two apart (the stand-in saw bodies arrive 160 ms after their
headers on average).

This backend keeps what httpcore asks of a stream, its errors included (ReadTimeout,
WriteError, ConnectError...), and does each thing the plain asyncio way: a protocol
that buffers what arrives, writes handed to the transport at once (waiting only when
the transport says its buffer is full), timeouts as one timer each, TLS by
`loop.start_tls`. Whether an idle connection was closed by the server (httpcore asks
before reusing one) is known without a system call: the event loop reads every socket
all the time, so the protocol has already seen the end of the stream.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2

PAUSE_ABOVE = 1 << 20
"""Bytes buffered unread before the socket stops being read (a large download)."""
RESUME_BELOW = 1 << 16
HAPPY_EYEBALLS_DELAY = 0.25
"""Seconds before the next address is tried alongside (RFC 8305), as anyio does."""


class _Signal:
    """Something one coroutine waits for and a protocol callback gives."""

    __slots__ = ("_waiter",)

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    def give(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, timeout: float | None, late: type[Exception],
                   busy: type[Exception]) -> None:
        """Wait to be given it; `late` (an httpcore timeout) after `timeout` seconds.
        One task at a time: a second is refused with `busy` (as anyio refuses a second
        reader), never left waiting for a wake that goes to the other."""
        if self._waiter is not None:
            raise busy("another task is already waiting on this connection")
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        timer = None
        if timeout is not None:
            def expire() -> None:
                if not waiter.done():
                    waiter.set_exception(late(f"no progress within {timeout:g} s"))

            timer = asyncio.get_running_loop().call_later(max(0.0, timeout), expire)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


class _Buffered(asyncio.Protocol):
    """What arrived on one connection, and who waits for more or for room to write."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.data = bytearray()
        self.ended = False
        """The peer sent its end of the stream, or the connection was lost."""
        self.lost = False
        """The connection is gone (either side closed it, or it failed)."""
        self.closed_here = False
        """Hearth's side closed it: what was not read is no longer an answer."""
        self.error: BaseException | None = None
        self.reading_paused = False
        self.writing_paused = False
        self.arrived = _Signal()
        """Data or the end came."""
        self.room = _Signal()
        """The transport takes writes again (or the connection is gone)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.data += data
        if len(self.data) > PAUSE_ABOVE and self.transport is not None \
                and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        self.arrived.give()

    def eof_received(self) -> bool:
        self.ended = True
        self.arrived.give()
        # Plain TCP stays half open: the peer may still read. (TLS closes; asked to stay
        # open it would only warn.)
        return self.transport is None or self.transport.get_extra_info("ssl_object") is None

    def connection_lost(self, exc: BaseException | None) -> None:
        self.ended = self.lost = True
        self.error = exc
        self.arrived.give()
        self.room.give()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.room.give()


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """One connection (plain or TLS) as httpcore reads and writes it."""

    def __init__(self, transport: asyncio.Transport, buffered: _Buffered) -> None:
        self._transport = transport
        self._buffered = buffered

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        got = self._buffered
        while not got.data or got.closed_here:
            if got.closed_here:  # not the server's end: a cut-off answer is not whole
                raise httpcore2.ReadError("the connection was closed by this side")
            if got.ended:
                if got.error is not None:
                    raise httpcore2.ReadError(str(got.error) or type(got.error).__name__)
                return b""
            await got.arrived.wait(timeout, httpcore2.ReadTimeout, httpcore2.ReadError)
        chunk = bytes(got.data[:max_bytes])
        del got.data[:max_bytes]
        if got.reading_paused and len(got.data) < RESUME_BELOW:
            got.reading_paused = False
            self._transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        got = self._buffered
        if got.lost or got.closed_here or self._transport.is_closing():
            raise httpcore2.WriteError("the connection is closed")
        self._transport.write(buffer)
        while got.writing_paused and not got.lost and not got.closed_here:
            await got.room.wait(timeout, httpcore2.WriteTimeout, httpcore2.WriteError)
        if got.closed_here:
            raise httpcore2.WriteError("the connection was closed by this side")
        if got.lost and got.error is not None:
            raise httpcore2.WriteError(str(got.error) or type(got.error).__name__)

    async def aclose(self) -> None:
        got = self._buffered
        got.closed_here = True
        got.arrived.give()  # a read waiting now ends in ReadError, not in b""
        got.room.give()
        if self._transport.get_extra_info("ssl_object") is not None:
            # No close_notify handshake: asyncio would hold the socket up to 30 s for a
            # peer's reply, and the peer httpcore closes on is often one that hung
            # (anyio, the default, closes at once too).
            self._transport.abort()
        else:
            self._transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):  # wait_for may swallow a cancel (3.11)
                secured = await loop.start_tls(self._transport, self._buffered, ssl_context,
                                               server_hostname=server_hostname)
        except TimeoutError as exc:
            self._transport.close()
            raise httpcore2.ConnectTimeout("the TLS handshake timed out") from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self._transport.close()
            raise httpcore2.ConnectError(str(exc) or type(exc).__name__) from exc
        if secured is None:  # closed during the handshake (asyncio's own contract)
            self._transport.close()
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        self._buffered.transport = secured
        return AsyncioStream(secured, self._buffered)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # asked of an idle connection: did the server end it?
            got = self._buffered
            return got.ended or bool(got.data)
        name = {"ssl_object": "ssl_object", "client_addr": "sockname",
                "server_addr": "peername", "socket": "socket"}.get(info)
        return None if name is None else self._transport.get_extra_info(name)


class AsyncioNetwork(httpcore2.AsyncNetworkBackend):
    """httpcore's network backend on asyncio's transports (see the module's docstring)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[tuple[Any, ...]] | None = None,
                          ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        buffered = _Buffered()
        local = None if local_address is None else (local_address, 0)
        opening = loop.create_connection(lambda: buffered, host, port, local_addr=local,
                                         happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY)
        transport = await _connected(opening, timeout)
        return _with_options(transport, buffered, socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[tuple[Any, ...]] | None = None,
                                  ) -> httpcore2.AsyncNetworkStream:
        buffered = _Buffered()
        opening = asyncio.get_running_loop().create_unix_connection(lambda: buffered, path)
        transport = await _connected(opening, timeout)
        return _with_options(transport, buffered, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connected(opening: Any, timeout: float | None) -> asyncio.Transport:
    try:
        async with asyncio.timeout(timeout):  # wait_for may swallow a cancel (3.11)
            transport, _ = await opening
    except TimeoutError as exc:
        raise httpcore2.ConnectTimeout("connecting timed out") from exc
    except (OSError, UnicodeError) as exc:  # refused, unreachable, no such host, a name
        # the IDNA codec refuses (a label over 63 characters)
        raise httpcore2.ConnectError(str(exc) or type(exc).__name__) from exc
    return transport  # type: ignore[no-any-return]


def _with_options(transport: asyncio.Transport, buffered: _Buffered,
                  socket_options: Iterable[tuple[Any, ...]] | None) -> AsyncioStream:
    raw: socket.socket | None = transport.get_extra_info("socket")
    try:
        for option in socket_options or ():
            if raw is not None:
                raw.setsockopt(*option)
    except OSError as exc:
        transport.close()
        raise httpcore2.ConnectError(str(exc)) from exc
    return AsyncioStream(transport, buffered)


def use_asyncio_network(client: Any) -> int:
    """Put AsyncioNetwork under every connection pool of an httpx2 client (its default
    transport and each proxy's): how many pools now use it. httpx2 builds its pools
    itself and takes no backend, so they are reached through its transports; a pool
    of another kind (or an httpx2 that is built otherwise) keeps its own backend, and
    a test (tests/integration/test_asyncio_network.py) fails on the SDKs'
    clients if none was reached."""
    transports = [getattr(client, "_transport", None),
                  *(getattr(client, "_mounts", None) or {}).values()]
    placed = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is not None and isinstance(getattr(pool, "_network_backend", None),
                                           httpcore2.AsyncNetworkBackend):
            pool._network_backend = AsyncioNetwork()
            placed += 1
    return placed
