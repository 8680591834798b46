"""HTTP/1.1 for the model clients, without httpcore's pool and h11's events.

    http = anthropic.DefaultAsyncHttpxClient(verify=context)
    use_http1(http, context)     # requests not sent through a proxy go through Http1

Every agent's turn is a chain of requests, and a tick waits on the last agent's
chain; that agent's next request goes only once the loop has sent everyone else's
(`python -m bench minds`). Sending a request and reading its answer through
httpcore's connection pool and h11 cost about 0.6 ms of the loop's time (locks,
events, cancel shields, every header validated by a regular expression), two fifths
of a 240-agent tick's CPU. This transport does the same HTTP/1.1 exchange in a
fraction of that, over the same streams (adapters/asyncio_network.py: connect, TLS,
timeouts and their errors are theirs):

- one connection per request in flight, kept for the next when the answer was read
  to its end and neither side said `close` (nor switched protocols with a 101); an
  idle one the server has ended (its end already seen by the event loop) or idle
  longer than `keepalive_expiry` is closed, not reused; at most `max_connections`
  at once (`PoolTimeout` after the pool timeout), at most `max_keepalive` idle;
- the request's head and body written together; the answer's framing as RFC 9112
  §6 has it: no body for HEAD, 1xx, 204 and 304, chunked when `Transfer-Encoding`
  says chunked (another transfer coding, which httpx never asks for and cannot undo,
  is refused, as h11 refuses it), else `Content-Length` (one value, a whole number),
  else until the server closes; interim 1xx answers are skipped;
- a request header that would split the request (CR, LF or NUL in it, a name that
  is not a token) is httpx's `LocalProtocolError`, sent nowhere, as with h11;
- anything else a server sends (a head past 64 KiB, a broken status line or chunk,
  a body cut short) is httpx's `RemoteProtocolError`; a connection cancelled or
  failed mid-exchange is closed, never reused, and so is every connection when the
  transport is closed, those in use too (a body still coming ends in `ReadError`).

Requests through a proxy keep httpx's own transports (`use_http1` replaces only the
client's direct one), and so do clients of another make. Http1 takes the client's
limits and socket options (the SDKs ask for TCP keepalive there: a long answer
through a NAT is not dropped unseen). `warm` opens connections ahead of the first
requests (a run's first tick would otherwise open them all while the others wait).
"""

from __future__ import annotations

import asyncio
import re
import ssl
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpcore2
import httpx2

from adapters.asyncio_network import AsyncioNetwork

HEAD_LIMIT = 64 * 1024
"""Bytes an answer's status line and headers may take."""
READ_SIZE = 64 * 1024
_NO_BODY = frozenset({204, 304})
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""A header name or method (RFC 9110 §5.6.2)."""
_HEX = b"0123456789abcdefABCDEF"
_ERRORS: dict[type[Exception], type[Exception]] = {
    httpcore2.ConnectTimeout: httpx2.ConnectTimeout, httpcore2.ReadTimeout: httpx2.ReadTimeout,
    httpcore2.WriteTimeout: httpx2.WriteTimeout, httpcore2.PoolTimeout: httpx2.PoolTimeout,
    httpcore2.ConnectError: httpx2.ConnectError, httpcore2.ReadError: httpx2.ReadError,
    httpcore2.WriteError: httpx2.WriteError,
}


class _Broken(Exception):
    """The server's bytes are not HTTP/1.1 (raised as httpx's RemoteProtocolError)."""


def _as_httpx(exc: BaseException) -> Exception:
    """The httpx error a stream's (httpcore's) error or a broken answer is to callers."""
    if isinstance(exc, _Broken):
        return httpx2.RemoteProtocolError(str(exc))
    return next(httpx_error(str(exc)) for stream_error, httpx_error in _ERRORS.items()
                if isinstance(exc, stream_error))


def _origin(url: httpx2.URL) -> tuple[bytes, bytes, int]:
    """Which server a URL's connections go to: scheme, host, port."""
    return url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80)


class _Connection:
    """One stream, with what has been read from it and not used yet."""

    __slots__ = ("stream", "buffer", "idle_since")

    def __init__(self, stream: httpcore2.AsyncNetworkStream) -> None:
        self.stream = stream
        self.buffer = bytearray()
        self.idle_since = 0.0

    async def fill(self, timeout: float | None) -> bool:
        """Read more into the buffer; False when the server has ended the stream."""
        chunk = await self.stream.read(READ_SIZE, timeout)
        self.buffer += chunk
        return bool(chunk)

    async def head(self, timeout: float | None) -> bytes:
        """The status line and headers, up to the empty line."""
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > HEAD_LIMIT:
                raise _Broken("the answer's head is larger than 64 KiB")
            if not await self.fill(timeout):
                raise _Broken("Server disconnected without sending a response."
                              if not self.buffer else "the answer's head was cut short")
        if end > HEAD_LIMIT:
            raise _Broken("the answer's head is larger than 64 KiB")
        head = bytes(self.buffer[:end])
        del self.buffer[:end + 4]
        return head

    async def line(self, timeout: float | None) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > HEAD_LIMIT:
                raise _Broken("a chunk's line is too long")
            if not await self.fill(timeout):
                raise _Broken("the answer's body was cut short")
        found = bytes(self.buffer[:end])
        del self.buffer[:end + 2]
        return found

    async def take(self, size: int, timeout: float | None) -> bytes:
        """Up to `size` bytes (at least one), b"" when the server has ended the stream."""
        if not self.buffer and not await self.fill(timeout):
            return b""
        got = bytes(self.buffer[:size])
        del self.buffer[:size]
        return got

    def reusable(self, now: float, expiry: float) -> bool:
        return (now - self.idle_since < expiry and not self.buffer
                and not self.stream.get_extra_info("is_readable"))


def _parse_head(head: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    """Status, version, headers and reason phrase."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0") \
            or len(parts[1]) != 3 or not parts[1].isdigit() or parts[1] < b"100":
        raise _Broken(f"not an HTTP/1.1 status line: {lines[0][:80]!r}")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise _Broken(f"not a header line: {line[:80]!r}")
        headers.append((name, value.strip(b" \t")))
    return int(parts[1]), parts[0], headers, parts[2] if len(parts) > 2 else b""


def _framing(method: bytes, status: int, version: bytes,
             headers: list[tuple[bytes, bytes]]) -> tuple[str, int, bool]:
    """How the body ends ("none", "length", "chunked", "close"), its length, and
    whether the connection may be kept after it."""
    keep = version == b"HTTP/1.1"
    codings: list[bytes] = []
    lengths = set()
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"connection":
            keep = keep and b"close" not in value.lower()
        elif lowered == b"transfer-encoding":
            codings += (coding.strip() for coding in value.lower().split(b","))
        elif lowered == b"content-length":
            lengths.update(v.strip() for v in value.split(b","))
    if status < 200:  # 101: the connection now speaks another protocol
        return "none", 0, False
    if method == b"HEAD" or status in _NO_BODY:
        return "none", 0, keep
    if codings:
        if codings != [b"chunked"]:
            raise _Broken(f"only Transfer-Encoding: chunked is supported, not {codings!r}")
        return "chunked", 0, keep
    if lengths:
        if len(lengths) != 1 or not next(iter(lengths)).isdigit():
            raise _Broken(f"Content-Length is not one whole number: {sorted(lengths)!r}")
        return "length", int(next(iter(lengths))), keep
    return "close", 0, False


class _Body(httpx2.AsyncByteStream):
    """An answer's body, read as httpx reads it; the connection goes back to the pool
    once the body has been read to its end, else it is closed."""

    def __init__(self, transport: Http1, origin: tuple[bytes, bytes, int], conn: _Connection,
                 framing: tuple[str, int, bool], timeout: float | None) -> None:
        self._transport, self._origin, self._conn = transport, origin, conn
        self._kind, self._left, self._keep = framing
        self._timeout = timeout
        self._done = self._kind == "none"

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._chunks():
                yield chunk
        except (_Broken, *_ERRORS) as exc:
            await self._drop()
            raise _as_httpx(exc) from exc

    async def _chunks(self) -> AsyncIterator[bytes]:
        conn, timeout = self._conn, self._timeout
        if self._kind == "length":
            while self._left:
                got = await conn.take(self._left, timeout)
                if not got:
                    raise _Broken("peer closed connection without sending complete message "
                                  "body")
                self._left -= len(got)
                yield got
        elif self._kind == "chunked":
            while True:
                size_text = (await conn.line(timeout)).split(b";", 1)[0].strip(b" \t")
                if not size_text or size_text.strip(_HEX) or len(size_text) > 16:
                    # hex digits only: int() would also take "0x5", "1_0" and "-5"
                    raise _Broken(f"not a chunk size: {size_text[:20]!r}")
                size = int(size_text, 16)
                if size == 0:
                    while await conn.line(timeout):  # trailers, up to the empty line
                        pass
                    break
                while size:
                    got = await conn.take(size, timeout)
                    if not got:
                        raise _Broken("the answer's body was cut short")
                    size -= len(got)
                    yield got
                if await conn.line(timeout):
                    raise _Broken("a chunk did not end where its size said")
        elif self._kind == "close":
            while got := await conn.take(READ_SIZE, timeout):
                yield got
        self._done = True

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._transport._discard(conn)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and self._keep and not conn.buffer:
            await self._transport._keep(self._origin, conn)
        else:
            await self._transport._discard(conn)


class Http1(httpx2.AsyncBaseTransport):
    """httpx's transport interface over plain HTTP/1.1 (see the module's docstring)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None, *,
                 max_connections: int | None = 1000, max_keepalive: int | None = 100,
                 keepalive_expiry: float | None = 5.0,
                 socket_options: list[tuple[Any, ...]] | None = None) -> None:
        self._ssl = ssl_context
        self._network = AsyncioNetwork()
        self._idle: dict[tuple[bytes, bytes, int], list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        """Connections with a request in flight: closed with the transport."""
        self._room = asyncio.Semaphore(sys.maxsize if max_connections is None
                                       else max_connections)
        self._max_keepalive = sys.maxsize if max_keepalive is None else max_keepalive
        self._expiry = float("inf") if keepalive_expiry is None else keepalive_expiry
        self._socket_options = socket_options
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self._closed:
            raise RuntimeError("the transport is closed")
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx2.UnsupportedProtocol(f"Request URL has an unsupported protocol "
                                             f"'{url.scheme}://'.")
        timeouts = request.extensions.get("timeout", {})
        origin = _origin(url)
        body = await request.aread()
        head, closing = self._head(request, body)
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._room.acquire()
        except TimeoutError:
            raise httpx2.PoolTimeout("no connection came free in time") from None
        conn: _Connection | None = None
        try:
            conn = await self._connection(origin, timeouts.get("connect"))
            self._busy.add(conn)
            await conn.stream.write(head + body, timeouts.get("write"))
            read = timeouts.get("read")
            while True:
                status, version, headers, reason = _parse_head(await conn.head(read))
                if not 100 <= status < 200 or status == 101:
                    break
            kind, length, keep = _framing(request.method.encode("ascii"), status, version,
                                          headers)
        except BaseException as exc:
            if conn is not None:
                await self._discard(conn)
            else:
                self._room.release()
            if isinstance(exc, (_Broken, *_ERRORS)):
                raise _as_httpx(exc) from exc
            raise
        return httpx2.Response(
            status, headers=headers,
            stream=_Body(self, origin, conn, (kind, length, keep and not closing), read),
            extensions={"http_version": version, "reason_phrase": reason})

    def _head(self, request: httpx2.Request, body: bytes) -> tuple[bytes, bool]:
        """The request's head, and whether it says `Connection: close` (RFC 9112 §9.6:
        then no other request may follow on its connection). LocalProtocolError for a
        head that would not be read as the one request it is."""
        url = request.url
        method = request.method.encode("ascii")
        target = url.raw_path or b"/"
        lines = [method + b" " + target + b" HTTP/1.1"]
        closing = False
        for name, value in request.headers.raw:
            lowered = name.lower()
            if lowered in (b"transfer-encoding", b"content-length"):
                continue  # the body is sent whole, with its length
            if lowered == b"connection" and b"close" in value.lower():
                closing = True
            if not _TOKEN.fullmatch(name):
                raise httpx2.LocalProtocolError(f"Illegal header name {name!r}")
            lines.append(name + b": " + value)
        if body or request.method not in ("GET", "HEAD"):
            lines.append(b"Content-Length: " + str(len(body)).encode("ascii"))
        head = b"\r\n".join(lines) + b"\r\n\r\n"
        # Names and lengths hold no CR or LF: one more than the lines there are means a
        # value, the method or the target holds one (a header or request smuggled in).
        if head.count(b"\n") != len(lines) + 1 or head.count(b"\r") != len(lines) + 1 \
                or b"\0" in head or not _TOKEN.fullmatch(method):
            raise httpx2.LocalProtocolError("a request header or line holds CR, LF or NUL")
        return head, closing

    async def _connection(self, origin: tuple[bytes, bytes, int],
                          timeout: float | None) -> _Connection:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.reusable(now, self._expiry):
                return conn
            await conn.stream.aclose()
        return await self._open(origin, timeout)

    async def _open(self, origin: tuple[bytes, bytes, int],
                    timeout: float | None) -> _Connection:
        scheme, host, port = origin
        name = host.decode("ascii")
        stream = await self._network.connect_tcp(name, port, timeout=timeout,
                                                 socket_options=self._socket_options)
        if scheme == b"https":
            try:
                stream = await stream.start_tls(self._ssl or ssl.create_default_context(),
                                                server_hostname=name, timeout=timeout)
            except BaseException:
                await stream.aclose()
                raise
        return _Connection(stream)

    async def warm(self, url: httpx2.URL, count: int, timeout: float | None = 10.0) -> int:
        """Open up to `count` connections to `url`'s server now (TCP, and TLS for
        https), kept idle for the first requests: how many opened. A run's first tick
        would otherwise open every agent's connection while the others' requests wait
        to be sent (with TLS, a handshake each). One that fails is left for a request
        to meet again, and say so; one not used within `keepalive_expiry` is closed."""
        if url.scheme not in ("http", "https") or self._closed:
            return 0
        origin = _origin(url)
        room = max(0, min(count, self._max_keepalive - len(self._idle.get(origin, ()))))

        async def one() -> _Connection | None:
            try:
                return await self._open(origin, timeout)
            except (httpcore2.NetworkError, httpcore2.TimeoutException, OSError):
                return None

        made = [c for c in await asyncio.gather(*(one() for _ in range(room))) if c]
        now = time.monotonic()
        for conn in made:
            conn.idle_since = now
        self._idle.setdefault(origin, []).extend(made)
        return len(made)

    async def _keep(self, origin: tuple[bytes, bytes, int], conn: _Connection) -> None:
        self._room.release()
        self._busy.discard(conn)
        idle = self._idle.setdefault(origin, [])
        if self._closed or len(idle) >= self._max_keepalive:
            await conn.stream.aclose()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def _discard(self, conn: _Connection) -> None:
        self._room.release()
        self._busy.discard(conn)
        await conn.stream.aclose()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for conn in [*self._busy, *(conn for conns in idle.values() for conn in conns)]:
            await conn.stream.aclose()  # a read waiting on a busy one ends in ReadError


def use_http1(client: Any, ssl_context: ssl.SSLContext | None) -> bool:
    """Put Http1 under an httpx2 client's direct requests, with the client's limits and
    socket options: True when it did. A client that sends through a proxy (a mount
    with a transport), one whose transport asks for what Http1 does not do (HTTP/2, a
    Unix socket, a local address, retries), or one built otherwise, keeps its own."""
    mounts = getattr(client, "_mounts", None)
    if not isinstance(client, httpx2.AsyncClient) or mounts is None \
            or any(t is not None for t in mounts.values()):
        return False
    transport = getattr(client, "_transport", None)
    pool = getattr(transport, "_pool", None)
    if not isinstance(transport, httpx2.AsyncHTTPTransport) \
            or type(pool) is not httpcore2.AsyncConnectionPool:
        return False
    settings = vars(pool)
    if settings.get("_http2") or not settings.get("_http1", True) or settings.get("_uds") \
            or settings.get("_local_address") or settings.get("_retries"):
        return False
    client._transport = Http1(
        ssl_context or settings.get("_ssl_context"),
        max_connections=settings.get("_max_connections", 1000),
        max_keepalive=settings.get("_max_keepalive_connections", 100),
        keepalive_expiry=settings.get("_keepalive_expiry", 5.0),
        socket_options=settings.get("_socket_options"))
    return True
