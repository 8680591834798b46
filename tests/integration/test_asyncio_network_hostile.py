"""A hostile review of adapters/asyncio_network.py: what httpcore2 expects of a network
backend, and what a real network does to one, on real sockets (127.0.0.1), real TLS
(trustme), real proxies (HTTP CONNECT over TLS, SOCKS5) and real threads acting as
peers that asyncio's own servers would be too polite to be.

Most stream-level tests run twice: against AsyncioNetwork, and against httpcore2's
default anyio backend as the reference ("anyio-reference"), so a failure on the first
alone is a place where the new backend stops behaving as the one it replaces did. The
reference runs test a library rather than Hearth: they run with --run-slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
import struct
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpcore2
import httpx2
import openai
import pytest
from httpcore2._backends.anyio import AnyIOBackend

from adapters.asyncio_network import PAUSE_ABOVE, AsyncioNetwork, use_asyncio_network
from tests.integration.conftest import full_backlog

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
Backend = type[httpcore2.AsyncNetworkBackend]

BACKENDS = [pytest.param(AsyncioNetwork, id="asyncio"),
            # httpcore's own backend, the reference: what the new one must match. Its
            # runs test a library, not Hearth, so they wait for --run-slow.
            pytest.param(AnyIOBackend, id="anyio-reference", marks=pytest.mark.slow)]


# ---------------------------------------------------------------- peers

@contextlib.asynccontextmanager
async def server(handle: Handler, *, tls: ssl.SSLContext | None = None
                 ) -> AsyncIterator[int]:
    """An asyncio server on 127.0.0.1 running `handle` per connection: its port."""
    async def each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, OSError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(each, "127.0.0.1", 0, ssl=tls)
    try:
        yield listening.sockets[0].getsockname()[1]
    finally:
        listening.close()


@contextlib.contextmanager
def thread_peer(serve: Callable[[socket.socket], None]) -> Iterator[int]:
    """A peer on 127.0.0.1 that runs `serve(accepted_socket)` in a thread, with blocking
    sockets: it does exactly what it is told (no close_notify it is not asked for)."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(4)
    listening.settimeout(5)

    def run() -> None:
        with contextlib.suppress(OSError):
            accepted, _ = listening.accept()
            accepted.settimeout(5)
            with accepted:
                serve(accepted)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield listening.getsockname()[1]
    finally:
        listening.close()
        thread.join(6)


def open_sockets() -> set[str]:
    """This process's open sockets, by inode ("socket:[1234]"): a socket opened and
    left open shows as new, whatever other tests' sockets close meanwhile."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:"):
                found.add(target)
    return found


def linger_reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST instead of FIN."""
    raw = writer.get_extra_info("socket")
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(30)


async def read_all(stream: httpcore2.AsyncNetworkStream, timeout: float = 5) -> bytes:
    got = bytearray()
    while chunk := await stream.read(65536, timeout=timeout):
        got += chunk
    return bytes(got)


# ---------------------------------------------------------------- closing our own end

@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_read_after_aclose_is_a_read_error_not_the_end_of_the_stream(
        backend: Backend) -> None:
    """httpcore's streams raise ReadError on a stream closed on our side (anyio:
    ClosedResourceError). b"" would say "the server ended the message": a body read
    until the connection ends (no content-length) would be taken as whole."""
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.aclose()
        with pytest.raises(httpcore2.ReadError):
            await asyncio.wait_for(stream.read(1024, timeout=2), 3)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_read_waiting_when_the_stream_is_closed_is_a_read_error(
        backend: Backend) -> None:
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        reading = asyncio.create_task(stream.read(1024, timeout=3))
        await asyncio.sleep(0.05)
        await stream.aclose()
        with pytest.raises(httpcore2.ReadError):
            await asyncio.wait_for(reading, 4)


@pytest.mark.parametrize("use_asyncio", [
    pytest.param(True, id="asyncio"),
    pytest.param(False, id="anyio-reference", marks=pytest.mark.slow)])
async def test_closing_the_client_mid_body_does_not_pass_a_truncated_body_as_whole(
        use_asyncio: bool) -> None:
    """A response whose body runs until the connection ends (HTTP/1.0 style, no
    content-length) is being read when the client is closed (Hearth stopping): the
    reader must get an error, not a clean end after the part it had."""
    async def half_a_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nfirst part,")
        await writer.drain()
        await asyncio.sleep(5)
        writer.write(b"second part")

    async with server(half_a_body) as port:
        client = httpx2.AsyncClient()
        if use_asyncio:
            assert use_asyncio_network(client) == 1
        got = b""

        async def read_body() -> None:
            nonlocal got
            async with client.stream("GET", f"http://127.0.0.1:{port}/") as answer:
                async for chunk in answer.aiter_raw():
                    got += chunk

        reading = asyncio.create_task(read_body())
        while not got:
            await asyncio.sleep(0.01)
        await client.aclose()
        with pytest.raises(httpx2.TransportError):
            await asyncio.wait_for(reading, 3)
        assert got == b"first part,"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_aclose_is_idempotent_and_a_write_after_it_is_a_write_error(
        backend: Backend) -> None:
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.aclose()
        await stream.aclose()
        with pytest.raises(httpcore2.WriteError):
            await stream.write(b"x", timeout=1)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_closing_a_tls_stream_lets_go_of_the_socket_at_once(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """A TLS peer that does not answer our close_notify (a hung server, a dead path:
    the very reason httpcore closes a connection after a ReadTimeout). anyio's stream,
    as httpcore uses it (standard_compatible=False), closes the TCP socket at once;
    asyncio's SSL transport waits up to ssl_shutdown_timeout (30 s) for the answer,
    keeping the socket (and its file descriptor) all that time."""
    serving, trusting = tls
    ended: list[float] = []

    def handshake_then_ignore(raw: socket.socket) -> None:
        secured = serving.wrap_socket(raw, server_side=True)
        plain = socket.socket(fileno=os.dup(secured.fileno()))
        plain.settimeout(3)
        with plain, contextlib.suppress(TimeoutError):
            try:
                while plain.recv(65536):  # TLS records (close_notify too), never answered
                    pass
            except ConnectionResetError:  # closed with unread data: RST, as good as FIN
                pass
            ended.append(time.monotonic())

    with thread_peer(handshake_then_ignore) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        await asyncio.sleep(0.1)
        closed_at = time.monotonic()
        await stream.aclose()
        for _ in range(100):
            if ended:
                break
            await asyncio.sleep(0.02)
        assert ended, "the TCP connection was still open 2 s after aclose()"
        assert ended[0] - closed_at < 1


# ---------------------------------------------------------------- reads

def says_when(go: asyncio.Event, words: bytes) -> Handler:
    """A peer that writes `words` once `go` is set."""
    async def later(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await go.wait()
        writer.write(words)
        await writer.drain()

    return later


@pytest.mark.parametrize("backend", BACKENDS)
async def test_two_reads_at_once_leave_neither_stranded(backend: Backend) -> None:
    """Both reads must come back (with data, b"" or an error): a second reader must not
    take the first one's place, leaving it waiting for a wake that never comes (anyio
    refuses the second read at once, and so does AsyncioNetwork)."""
    go = asyncio.Event()
    async with server(says_when(go, b"x")) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        first = asyncio.create_task(stream.read(1024))
        await asyncio.sleep(0.02)
        second = asyncio.create_task(stream.read(1024))
        await asyncio.sleep(0.02)
        go.set()
        done, pending = await asyncio.wait({first, second}, timeout=1.5)
        for task in pending:
            task.cancel()
        await stream.aclose()
        assert not pending, "a read was stranded"
        for task in done:
            task.exception()  # a refusal is fine; being forgotten is not


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_cancelled_read_leaves_the_stream_readable(backend: Backend) -> None:
    go = asyncio.Event()
    async with server(says_when(go, b"after")) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        reading = asyncio.create_task(stream.read(1024, timeout=5))
        await asyncio.sleep(0.05)
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading
        go.set()
        assert await stream.read(1024, timeout=2) == b"after"
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_data_and_the_end_arriving_together_read_in_order(backend: Backend) -> None:
    async def say_and_go(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"last words")
        writer.write_eof()

    async with server(say_and_go) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        await asyncio.sleep(0.2)  # the data and the FIN are both in before the read
        assert await read_all(stream) == b"last words"
        assert await stream.read(10, timeout=1) == b""
        assert stream.get_extra_info("is_readable") is True
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_data_then_a_reset_reads_the_data_then_a_read_error(backend: Backend) -> None:
    async def say_and_reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"partial")
        await writer.drain()
        await asyncio.sleep(0.1)
        linger_reset(writer)

    async with server(say_and_reset) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        assert await stream.read(1024, timeout=2) == b"partial"
        with pytest.raises(httpcore2.ReadError):
            await stream.read(1024, timeout=2)
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("timeout", [0, -1])
async def test_zero_and_negative_read_timeouts_time_out_at_once(backend: Backend,
                                                                timeout: float) -> None:
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        began = time.monotonic()
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(1024, timeout=timeout)
        assert time.monotonic() - began < 0.5
        await stream.aclose()


# ---------------------------------------------------------------- writes

@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_half_closed_peer_still_gets_what_is_written(backend: Backend) -> None:
    """The peer ends its side (shutdown(SHUT_WR)) and goes on reading: TCP lets us
    keep writing, and anyio does: the connection must not be closed as the peer's FIN
    arrives."""
    received = bytearray()
    done = asyncio.Event()

    async def half_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"early answer")
        writer.write_eof()
        while data := await reader.read(65536):
            received.extend(data)
        done.set()

    async with server(half_close) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        assert await read_all(stream) == b"early answer"
        await stream.write(b"the rest of the request", timeout=2)
        await stream.aclose()
        await asyncio.wait_for(done.wait(), 2)
    assert bytes(received) == b"the rest of the request"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_reset_during_a_large_write_is_a_write_error(backend: Backend) -> None:
    async def read_a_bit_then_reset(reader: asyncio.StreamReader,
                                    writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        linger_reset(writer)

    async with server(read_a_bit_then_reset) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.WriteError):
            await asyncio.wait_for(stream.write(b"x" * (64 << 20), timeout=3), 4)
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_very_large_write_arrives_whole(backend: Backend) -> None:
    blob = os.urandom(1 << 20) * 16
    got = bytearray()
    done = asyncio.Event()

    async def sink(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1 << 20):
            got.extend(data)
        done.set()

    async with server(sink) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.write(blob, timeout=5)
        await stream.aclose()
        await asyncio.wait_for(done.wait(), 5)
    assert bytes(got) == blob


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_write_timeout_bounds_the_whole_write(backend: Backend) -> None:
    """httpx: the write timeout is "the maximum duration to wait for a chunk of data to
    be sent", and anyio applies it to the whole write: a peer that reads slowly but
    steadily must not stretch a write past it (asyncio resumes writing only once its
    buffer is nearly empty, so the timer is not started afresh on every drain)."""
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(16 << 10):
            await asyncio.sleep(0.02)

    async with server(trickle) as port:
        stream = await backend().connect_tcp(
            "127.0.0.1", port, timeout=5,
            socket_options=[(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 << 10)])
        began = time.monotonic()
        with pytest.raises(httpcore2.WriteTimeout):
            async with asyncio.timeout(2):
                await stream.write(b"x" * (8 << 20), timeout=0.3)
        assert time.monotonic() - began < 1.5
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_cancelled_write_leaves_no_stale_waiter(backend: Backend) -> None:
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        writing = asyncio.create_task(stream.write(b"x" * (64 << 20), timeout=None))
        await asyncio.sleep(0.1)
        writing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await writing
        with pytest.raises(httpcore2.WriteTimeout):
            await asyncio.wait_for(stream.write(b"y" * (1 << 20), timeout=0.1), 2)
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_negative_write_timeout_on_a_full_connection_times_out(
        backend: Backend) -> None:
    async with server(never) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.WriteTimeout):
            await asyncio.wait_for(stream.write(b"x" * (64 << 20), timeout=-1), 2)
        await stream.aclose()


# ---------------------------------------------------------------- connecting

@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_host_name_getaddrinfo_cannot_encode_is_a_connect_error(
        backend: Backend) -> None:
    """A label over 63 characters (a bad ANTHROPIC_BASE_URL): Python's idna codec raises
    UnicodeError, which is not an OSError: it must still come out as ConnectError (as
    httpx's own mapping and the SDK's retry of connection errors expect)."""
    with pytest.raises(httpcore2.ConnectError):
        await backend().connect_tcp("x" * 64 + ".invalid", 443, timeout=2)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_connect_cancelled_or_timed_out_leaves_no_socket(backend: Backend) -> None:
    with full_backlog() as port:
        await asyncio.sleep(0.05)
        before = open_sockets()
        connecting = asyncio.create_task(backend().connect_tcp("127.0.0.1", port, timeout=5))
        await asyncio.sleep(0.1)
        connecting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await connecting
        with pytest.raises(httpcore2.ConnectTimeout):
            await backend().connect_tcp("127.0.0.1", port, timeout=0.1)
        with pytest.raises(httpcore2.ConnectTimeout):
            await backend().connect_tcp("127.0.0.1", port, timeout=-1)
        await asyncio.sleep(0.05)
        assert open_sockets() - before == set()


async def cancel_at_every_moment(start: Callable[[], Awaitable[Any]]) -> list[int]:
    """Start the operation again and again, cancelling it after 0, 1, 2... turns of the
    event loop: the turns at which the cancellation was swallowed (the task came back
    with a result, as if never cancelled)."""
    swallowed = []
    for turns in range(40):
        task = asyncio.ensure_future(start())
        for _ in range(turns):
            await asyncio.sleep(0)
        if task.done():
            await (await task).aclose()
            break
        task.cancel()
        try:
            result = await task
        except (asyncio.CancelledError, httpcore2.ConnectError):
            continue
        swallowed.append(turns)
        await result.aclose()
    return swallowed


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cancelling_a_connect_is_never_swallowed(backend: Backend) -> None:
    """A cancel must never be lost, whenever it lands: asyncio.wait_for on Python 3.11
    returns the result and drops the cancellation when the task is cancelled in the
    turn between the connection being made and wait_for waking up (fixed in 3.12).
    The SDK always gives a connect timeout, so every connect would go through it, and
    a cancelled request (a TaskGroup or asyncio.timeout around an agent's call, a
    stop) would go on."""
    async with server(never) as port:
        assert await cancel_at_every_moment(
            lambda: backend().connect_tcp("127.0.0.1", port, timeout=5)) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cancelling_a_tls_handshake_is_never_swallowed(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    serving, trusting = tls
    async with server(never, tls=serving) as port:
        async def connect_and_secure() -> httpcore2.AsyncNetworkStream:
            plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
            try:
                return await plain.start_tls(trusting, server_hostname="localhost",
                                             timeout=5)
            except BaseException:
                await plain.aclose()
                raise

        assert await cancel_at_every_moment(connect_and_secure) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_local_address_binds_the_connection(backend: Backend) -> None:
    async def echo_addr(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(repr(writer.get_extra_info("peername")).encode())
        await writer.drain()

    async with server(echo_addr) as port:
        stream = await backend().connect_tcp("127.0.0.1", port, timeout=5,
                                             local_address="127.0.0.1")
        assert stream.get_extra_info("client_addr")[0] == "127.0.0.1"
        await stream.aclose()
        # "0.0.0.0" asks for IPv4 (httpcore's documented use of local_address)
        stream = await backend().connect_tcp("localhost", port, timeout=5,
                                             local_address="0.0.0.0")
        assert stream.get_extra_info("socket").family == socket.AF_INET
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unix_sockets(backend: Backend, tmp_path: Path) -> None:
    path = str(tmp_path / "s")

    async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"unix")
        await writer.drain()

    listening = await asyncio.start_unix_server(hello, path)
    try:
        stream = await backend().connect_unix_socket(path, timeout=5)
        assert await stream.read(10, timeout=2) == b"unix"
        assert stream.get_extra_info("server_addr") == path
        await stream.aclose()
        with pytest.raises(httpcore2.ConnectError):
            await backend().connect_unix_socket(str(tmp_path / "nobody"), timeout=2)
    finally:
        listening.close()


async def test_httpx_over_a_unix_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "s")

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()

    listening = await asyncio.start_unix_server(answer, path)
    try:
        client = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=path))
        assert use_asyncio_network(client) == 1
        assert (await client.get("http://x/")).text == "ok"
        await client.aclose()
    finally:
        listening.close()


# ---------------------------------------------------------------- TLS

@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_tls_end_without_close_notify_reads_as_the_end(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """Ragged EOF (the peer's TCP FIN with no close_notify, common with HTTP servers):
    httpcore's anyio stream reads it as b"" (standard_compatible=False), so a body
    that runs until the connection ends is still read."""
    serving, trusting = tls

    def say_then_drop(raw: socket.socket) -> None:
        secured = serving.wrap_socket(raw, server_side=True)
        secured.sendall(b"the whole body")
        time.sleep(0.1)
        raw_again = socket.socket(fileno=os.dup(secured.fileno()))
        raw_again.shutdown(socket.SHUT_RDWR)
        raw_again.close()

    with thread_peer(say_then_drop) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        assert await read_all(stream) == b"the whole body"
        assert stream.get_extra_info("is_readable") is True
        await stream.aclose()


async def test_garbage_inside_a_tls_connection_is_a_read_error(
        tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """Bytes that are no TLS record (a middlebox, a corrupted stream) after the
    handshake: a ReadError, neither a hang nor a clean end. (Better than the default:
    httpcore's anyio stream lets the raw ssl.SSLError out, unmapped.)"""
    backend = AsyncioNetwork
    serving, trusting = tls

    def handshake_then_junk(raw: socket.socket) -> None:
        secured = serving.wrap_socket(raw, server_side=True)
        secured.sendall(b"fine")
        time.sleep(0.1)
        with socket.socket(fileno=os.dup(secured.fileno())) as under:
            under.sendall(b"\x17\x03\x03\x00\x20" + b"\x00" * 32)  # a record, undecryptable
            time.sleep(0.5)

    with thread_peer(handshake_then_junk) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        assert await stream.read(10, timeout=2) == b"fine"
        with pytest.raises(httpcore2.ReadError):
            await stream.read(10, timeout=2)
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_tls_close_notify_reads_as_the_end(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    serving, trusting = tls
    idle = asyncio.Event()

    async def say_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bye")
        await writer.drain()
        await idle.wait()  # then close (with close_notify) on an idle connection

    async with server(say_then_close, tls=serving) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        assert await stream.read(10, timeout=2) == b"bye"
        assert stream.get_extra_info("is_readable") is False
        idle.set()
        await asyncio.sleep(0.2)
        assert stream.get_extra_info("is_readable") is True
        assert await stream.read(10, timeout=2) == b""
        await stream.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_large_tls_answer_ending_with_the_connection_arrives_whole(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """More than PAUSE_ABOVE arrives unread, so reading is paused when the end of the
    stream comes (asyncio's SSL protocol then holds the EOF until reading resumes)."""
    serving, trusting = tls
    blob = os.urandom(3 * PAUSE_ABOVE + 12345)

    async def send_and_close(reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
        writer.write(blob)
        await writer.drain()

    async with server(send_and_close, tls=serving) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        await asyncio.sleep(0.3)
        assert await read_all(stream) == blob
        await stream.aclose()


async def test_a_cancelled_tls_handshake_closes_the_connection(
        tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """Better than the default: httpcore's anyio stream closes the connection only on
    an Exception, so a cancelled handshake leaves its socket open until collected."""
    backend = AsyncioNetwork
    _, trusting = tls
    ended = asyncio.Event()

    async def wait_for_the_end(reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass
        ended.set()

    async with server(wait_for_the_end) as port:  # plain: the handshake never ends
        before = open_sockets()
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        securing = asyncio.create_task(
            plain.start_tls(trusting, server_hostname="localhost", timeout=None))
        await asyncio.sleep(0.1)
        securing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await securing
        await asyncio.wait_for(ended.wait(), 2)
        with pytest.raises(httpcore2.ConnectTimeout):
            plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
            await plain.start_tls(trusting, server_hostname="localhost", timeout=0)
        await asyncio.sleep(0.1)
        assert open_sockets() - before == set()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_reset_mid_handshake_is_a_connect_error(
        backend: Backend, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    _, trusting = tls

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(10)  # the ClientHello
        linger_reset(writer)

    async with server(reset) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ConnectError):
            await plain.start_tls(trusting, server_hostname="localhost", timeout=3)


async def test_extra_info_httpcore_asks_of_a_tls_stream(
        tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """Better than the default too: anyio's is_readable polls the raw socket, which the
    TLS 1.3 session tickets make readable, so an idle connection looks ended."""
    backend = AsyncioNetwork
    serving, trusting = tls

    async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async with server(hello, tls=serving) as port:
        plain = await backend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        ssl_object = stream.get_extra_info("ssl_object")
        assert ssl_object.selected_alpn_protocol() is None
        assert ssl_object.server_hostname == "localhost"
        assert stream.get_extra_info("server_addr")[1] == port
        assert stream.get_extra_info("client_addr")[0] == "127.0.0.1"
        assert stream.get_extra_info("socket").fileno() >= 0
        await asyncio.sleep(0.1)  # TLS 1.3 session tickets arrive: not app data
        assert stream.get_extra_info("is_readable") is False
        await stream.aclose()


# ---------------------------------------------------------------- proxies

async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    dst.close()


async def connect_proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    _, _, port = head.split()[1].decode().rpartition(":")
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(port))
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def json_origin(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    body = b'{"ok": true}'
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                 b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
    await writer.drain()


@pytest.mark.parametrize("use_asyncio", [
    pytest.param(True, id="asyncio"),
    pytest.param(False, id="anyio-reference", marks=pytest.mark.slow)])
async def test_tls_inside_tls_through_an_https_proxy(
        use_asyncio: bool, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """HTTPS_PROXY=https://...: TLS to the proxy, then the origin's TLS inside it."""
    serving, trusting = tls
    async with server(json_origin, tls=serving) as origin_port, \
            server(connect_proxy, tls=serving) as proxy_port:
        client = httpx2.AsyncClient(
            verify=trusting, trust_env=False,
            proxy=httpx2.Proxy(f"https://localhost:{proxy_port}", ssl_context=trusting))
        if use_asyncio:
            assert use_asyncio_network(client) == 2
        answer = await asyncio.wait_for(client.get(f"https://localhost:{origin_port}/"), 5)
        await client.aclose()
    assert answer.json() == {"ok": True}


async def test_a_plain_http_request_through_an_http_proxy_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines: list[bytes] = []

    async def forward_proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines.append(head.split(b"\r\n")[0])
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nproxied")
        await writer.drain()

    async with server(forward_proxy) as proxy_port:
        for name in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "all_proxy",
                     "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy_port}")
        client = anthropic.DefaultAsyncHttpxClient()
        assert use_asyncio_network(client) == 2
        answer = await client.get("http://origin.invalid:8080/v1")
        proxy_pool = next(t for t in client._mounts.values() if t is not None)._pool
        assert isinstance(proxy_pool._network_backend, AsyncioNetwork)
        assert len(proxy_pool.connections) == 1  # the request went by that pool
        await client.aclose()
    assert answer.text == "proxied"
    assert lines == [b"GET http://origin.invalid:8080/v1 HTTP/1.1"]


def pools_of(client: httpx2.AsyncClient) -> list[Any]:
    transports = [client._transport, *client._mounts.values()]
    return [transport._pool for transport in transports if transport is not None]


@pytest.mark.parametrize("make", [anthropic.DefaultAsyncHttpxClient,
                                  openai.DefaultAsyncHttpxClient])
def test_every_pool_from_the_environment_is_reached(make: Callable[..., Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:1")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:2")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:3")
    monkeypatch.setenv("NO_PROXY", "localhost,internal.example")
    client = make()
    pools = pools_of(client)
    assert len(pools) == 4  # default, http://, https://, all://
    assert use_asyncio_network(client) == len(pools)
    assert all(isinstance(pool._network_backend, AsyncioNetwork) for pool in pools)
    assert None in client._mounts.values()  # NO_PROXY: those hosts use the default


@pytest.mark.parametrize("make", [anthropic.DefaultAsyncHttpxClient,
                                  openai.DefaultAsyncHttpxClient])
def test_a_proxy_argument_is_reached(make: Callable[..., Any],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    client = make(proxy="http://127.0.0.1:4")
    pools = pools_of(client)
    assert len(pools) == 2
    assert use_asyncio_network(client) == 2
    assert all(isinstance(pool._network_backend, AsyncioNetwork) for pool in pools)


async def socks5_proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    version, count = await reader.readexactly(2)
    await reader.readexactly(count)
    writer.write(b"\x05\x00")
    _, command, _, kind = await reader.readexactly(4)
    assert command == 1
    if kind == 1:
        await reader.readexactly(4)
    elif kind == 3:
        await reader.readexactly((await reader.readexactly(1))[0])
    else:
        await reader.readexactly(16)
    port = int.from_bytes(await reader.readexactly(2), "big")
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + port.to_bytes(2, "big"))
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@pytest.mark.parametrize("use_asyncio", [
    pytest.param(True, id="asyncio"),
    pytest.param(False, id="anyio-reference", marks=pytest.mark.slow)])
async def test_https_through_a_socks5_proxy(
        use_asyncio: bool, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    """ALL_PROXY=socks5://...: httpcore's SOCKS pool drives the backend itself (connect,
    the SOCKS exchange as writes and reads, then TLS). httpx2 needs socksio for it, a
    development dependency: a user who proxies through SOCKS installs it too."""
    serving, trusting = tls
    async with server(json_origin, tls=serving) as origin_port, \
            server(socks5_proxy) as proxy_port:
        client = httpx2.AsyncClient(verify=trusting, trust_env=False,
                                    proxy=f"socks5://127.0.0.1:{proxy_port}")
        if use_asyncio:
            assert use_asyncio_network(client) == 2
        answer = await asyncio.wait_for(client.get(f"https://localhost:{origin_port}/"), 5)
        await client.aclose()
    assert answer.json() == {"ok": True}
