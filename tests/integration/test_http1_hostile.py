"""A hostile review of adapters/http1.py: what an HTTP/1.1 client must do (RFC 9112),
against servers on 127.0.0.1 scripted byte by byte, over real sockets and real TLS
(trustme).

Most tests run twice: through Http1, and through httpx's own transport
(`httpx2.AsyncHTTPTransport`, httpcore's pool and h11) as the reference, and assert
the same outcome of both, so a failure on Http1 alone is a place where it stops
behaving as the transport it replaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import importlib.util
import json
import os
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import pytest

from adapters.claude_setup import new_client
from adapters.http1 import Http1, use_http1
from adapters.openai_mind import local_client
from adapters.sdk_http import warm_connections
from tests.integration.conftest import full_backlog

TRANSPORTS = [pytest.param("http1", id="http1"), pytest.param("reference", id="reference")]
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


# ---------------------------------------------------------------- peers

@dataclass
class Seen:
    """What a scripted server saw: connections accepted, requests (connection number,
    head, body), and the connections whose end the client closed."""
    accepts: int = 0
    requests: list[tuple[int, bytes, bytes]] = field(default_factory=list)
    ended: set[int] = field(default_factory=set)


Reply = Callable[[bytes, int], "bytes | tuple[bytes, str] | None"]
"""(request head, connection number) -> the bytes to answer, or (bytes, "close" |
"hold"), or None to close without answering."""


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lowered = head.lower()
    body = b""
    if b"transfer-encoding: chunked" in lowered:
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readuntil(b"\r\n")
    elif b"content-length:" in lowered:
        length = int(lowered.split(b"content-length:")[1].split(b"\r\n")[0])
        body = await reader.readexactly(length)
    return head, body


@contextlib.asynccontextmanager
async def serve(reply: Reply, *, tls: ssl.SSLContext | None = None
                ) -> AsyncIterator[tuple[str, Seen]]:
    """An HTTP server on 127.0.0.1 answering each request as `reply` says: its URL."""
    seen = Seen()

    async def each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = seen.accepts
        seen.accepts += 1
        try:
            while True:
                try:
                    head, body = await read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    seen.ended.add(number)
                    return
                seen.requests.append((number, head, body))
                answer = reply(head, number)
                if answer is None:
                    return
                action = ""
                if isinstance(answer, tuple):
                    answer, action = answer
                writer.write(answer)
                await writer.drain()
                if action == "close":
                    return
                if action == "hold":
                    with contextlib.suppress(ConnectionError):
                        if not await reader.read(1):
                            seen.ended.add(number)
                    return
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        except asyncio.CancelledError:  # the test is over: end quietly (asyncio logs a
            pass                        # cancelled handler as an error)
        finally:
            writer.close()

    listening = await asyncio.start_server(each, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}", seen
    finally:
        listening.close()


@contextlib.asynccontextmanager
async def raw_server(handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                                      Awaitable[None]]) -> AsyncIterator[str]:
    async def each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(each, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"
    finally:
        listening.close()


def client_for(kind: str, ssl_context: ssl.SSLContext | None = None, *,
               max_connections: int = 10, keepalive_expiry: float = 5.0,
               timeout: httpx2.Timeout | float = 2.0) -> httpx2.AsyncClient:
    if kind == "http1":
        transport: httpx2.AsyncBaseTransport = Http1(
            ssl_context, max_connections=max_connections, keepalive_expiry=keepalive_expiry)
    else:
        transport = httpx2.AsyncHTTPTransport(
            verify=ssl_context or True,
            limits=httpx2.Limits(max_connections=max_connections,
                                 keepalive_expiry=keepalive_expiry))
    return httpx2.AsyncClient(transport=transport, timeout=timeout)


async def until(condition: Callable[[], bool], what: str, within: float = 2.0) -> None:
    for _ in range(int(within / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {within} s: {what}")


def heads(seen: Seen) -> list[bytes]:
    return [head for _, head, _ in seen.requests]


# ---------------------------------------------------------------- keep-alive

@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_two_requests_in_a_row_share_one_connection(kind: str) -> None:
    async with serve(lambda head, n: OK) as (url, seen), client_for(kind) as client:
        assert (await client.get(url)).text == "ok"
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 1
        assert len(seen.requests) == 2


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("answer", [
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                 id="connection-close"),
    pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive, Close"
                 b"\r\n\r\nok", id="close-in-a-list"),
    pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", id="http-1.0"),
    pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok",
                 id="http-1.0-keep-alive")])
async def test_an_answer_that_ends_the_connection_is_not_reused(kind: str, answer: bytes
                                                                ) -> None:
    """The server keeps its end open, as a careless one would: only the client's reading
    of the answer decides."""
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        assert (await client.get(url)).text == "ok"
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2
        await until(lambda: 0 in seen.ended, "the first connection closed by the client")


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_request_saying_connection_close_is_not_followed_on_its_connection(
        kind: str) -> None:
    """RFC 9112 §9.6: a client that sends `close` must not send further requests on
    that connection, whatever the answer says. The server closes a moment after its
    answer (as told): a request sent there meanwhile would be lost."""
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "hold")
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        for _ in range(2):
            got = await client.get(url, headers={"Connection": "close"})
            assert got.text == "ok"
        assert seen.accepts == 2
        assert [n for n, _, _ in seen.requests] == [0, 1]


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_idle_connection_the_server_closed_is_replaced(kind: str) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "close")
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        assert (await client.get(url)).text == "ok"
        await asyncio.sleep(0.1)  # the server's FIN is in
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_idle_connection_past_keepalive_expiry_is_closed_not_reused(
        kind: str) -> None:
    async with serve(lambda head, n: OK) as (url, seen), \
            client_for(kind, keepalive_expiry=0.2) as client:
        assert (await client.get(url)).text == "ok"
        await asyncio.sleep(0.3)
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2
        await until(lambda: 0 in seen.ended, "the expired connection closed")


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_101_answer_leaves_its_connection_to_the_new_protocol(kind: str) -> None:
    """After 101 the connection speaks another protocol: never an HTTP/1.1 request."""
    def reply(head: bytes, n: int) -> bytes:
        if b"upgrade: foo" in head.lower():
            return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\n"
                    b"Connection: Upgrade\r\n\r\n")
        return OK

    async with serve(reply) as (url, seen), client_for(kind) as client:
        switched = await client.get(url, headers={"Upgrade": "foo", "Connection": "Upgrade"})
        assert switched.status_code == 101
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2
        assert [n for n, _, _ in seen.requests] == [0, 1]


# ---------------------------------------------------------------- framing

@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_answer_looks_as_the_reference_has_it(kind: str) -> None:
    answer = (b"HTTP/1.1 201 Made It\r\nSet-Cookie: a=1\r\nX-Thing:  spaced \t\r\n"
              b"set-cookie: b=2\r\nContent-Length: 5\r\nX-Thing: again\r\n\r\nhello")
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        got = await client.get(url)
        assert got.status_code == 201
        assert got.reason_phrase == "Made It"
        assert got.http_version == "HTTP/1.1"
        assert got.headers.raw == [
            (b"Set-Cookie", b"a=1"), (b"X-Thing", b"spaced"), (b"set-cookie", b"b=2"),
            (b"Content-Length", b"5"), (b"X-Thing", b"again")]
        assert got.headers.get_list("set-cookie") == ["a=1", "b=2"]
        assert got.content == b"hello"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_chunked_with_extensions_and_trailers_then_the_connection_is_kept(
        kind: str) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"5;name=value\r\nhello\r\n6;a=\"b\";c\r\n world\r\nA\r\n0123456789\r\n"
              b"0;last\r\nX-Trailer: yes\r\nOther: 1\r\n\r\n")
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        assert (await client.get(url)).content == b"hello world0123456789"
        assert (await client.get(url)).content == b"hello world0123456789"
        assert seen.accepts == 1


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_body_without_length_runs_until_the_server_closes(kind: str) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it, until the end",
              "close")
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        assert (await client.get(url)).text == "all of it, until the end"
        assert (await client.get(url)).text == "all of it, until the end"
        assert seen.accepts == 2


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize(("method", "status"), [("GET", 204), ("GET", 304), ("HEAD", 200)])
async def test_no_body_for_204_304_and_head_whatever_the_length_says(
        kind: str, method: str, status: int) -> None:
    answer = f"HTTP/1.1 {status} Whatever\r\nContent-Length: 5\r\n\r\n".encode()
    async with serve(lambda head, n: answer if n == 0 and len(heads(seen)) == 1 else OK) \
            as (url, seen), client_for(kind, timeout=1.0) as client:
        got = await client.request(method, url)
        assert (got.status_code, got.content) == (status, b"")
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 1


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_interim_1xx_answers_are_skipped(kind: str) -> None:
    answer = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
              b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        got = await client.post(url, content=b"body", headers={"Expect": "100-continue"})
        assert (got.status_code, got.text) == (200, "ok")
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 1


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("codings", [b"gzip, chunked", b"gzip", b"chunked, identity"])
async def test_a_transfer_coding_other_than_chunked_is_refused(kind: str, codings: bytes
                                                               ) -> None:
    """httpx never asks for one (no TE header) nor can undo one: a gzip transfer coding
    passed on would hand the caller compressed bytes as the body."""
    packed = gzip.compress(b"hello")
    answer = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + codings + b"\r\n\r\n"
              + f"{len(packed):x}\r\n".encode() + packed + b"\r\n0\r\n\r\n", "close")
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.get(url)


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_transfer_encoding_chunked_wins_over_content_length(kind: str) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"5\r\nhello\r\n0\r\n\r\n", "close")
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        assert (await client.get(url)).content == b"hello"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_gzip_content_encoding_is_decoded(kind: str) -> None:
    text = b"the quick brown fox " * 200
    packed = gzip.compress(text)
    answer = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "
              + str(len(packed)).encode() + b"\r\n\r\n" + packed)
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        got = await client.get(url)
        assert got.content == text
        assert got.headers["content-encoding"] == "gzip"


# ---------------------------------------------------------------- faults

@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_connection_refused_is_a_connect_error(kind: str) -> None:
    unused = socket.socket()
    unused.bind(("127.0.0.1", 0))
    port = unused.getsockname()[1]
    unused.close()
    async with client_for(kind) as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


BROKEN = {
    "body-cut-short": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
    "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "two-lengths-in-a-list": b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!",
    "negative-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello",
    "word-length": b"HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\nhello",
    "empty-length": b"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nhello",
    "bad-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
    "0x-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n"
                     b"0\r\n\r\n",
    "underscore-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"1_0\r\n0123456789abcdef\r\n0\r\n\r\n",
    "negative-chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n"
                           b"hello\r\n0\r\n\r\n",
    "chunk-without-crlf": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n"
                          b"helloXX0\r\n\r\n",
    "chunked-cut-short": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    "garbage-status-line": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "misspelt-version": b"HTPP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "four-digit-status": b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n",
    "two-digit-status": b"HTTP/1.1 99 Low\r\nContent-Length: 0\r\n\r\n",
    "header-without-colon": b"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n",
    "space-before-colon": b"HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
    "head-cut-short": b"HTTP/1.1 200 OK\r\nContent-Le",
    "huge-head": b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * (200 * 1024) + b"\r\n\r\n",
    "endless-head": b"HTTP/1.1 200 OK\r\n" + b"X-Big: a\r\n" * 30_000,
    "nothing": b"",
}


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_broken_answer_is_a_remote_protocol_error(kind: str, name: str) -> None:
    answer = (BROKEN[name], "close")
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.get(url)


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_repeated_equal_length_is_accepted(kind: str) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nhello"
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        assert (await client.get(url)).content == b"hello"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_server_closing_without_answering_then_the_next_request_works(
        kind: str) -> None:
    async with serve(lambda head, n: None if n == 0 else OK) as (url, seen), \
            client_for(kind) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.get(url)
        assert (await client.get(url)).text == "ok"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_tls_round_trip_and_keep_alive(
        kind: str, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    serving, trusting = tls
    async with serve(lambda head, n: OK, tls=serving) as (url, seen), \
            client_for(kind, trusting) as client:
        assert (await client.get(url)).text == "ok"
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 1


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_tls_with_an_untrusted_certificate_is_a_connect_error(
        kind: str, tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    serving, _ = tls
    async with serve(lambda head, n: OK, tls=serving) as (url, seen), \
            client_for(kind, ssl.create_default_context()) as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get(url)
        assert seen.requests == []


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel"],
                         ids=["no-head", "mid-body"])
async def test_a_silent_server_is_a_read_timeout(kind: str, answer: bytes) -> None:
    timeout = httpx2.Timeout(2.0, read=0.2)
    async with serve(lambda head, n: (answer, "hold")) as (url, _), \
            client_for(kind, timeout=timeout) as client:
        with pytest.raises(httpx2.ReadTimeout):
            await client.get(url)


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_full_backlog_is_a_connect_timeout(kind: str) -> None:
    with full_backlog() as port:
        await asyncio.sleep(0.05)
        timeout = httpx2.Timeout(2.0, connect=0.3)
        async with client_for(kind, timeout=timeout) as client:
            with pytest.raises(httpx2.ConnectTimeout):
                await client.get(f"http://127.0.0.1:{port}/")


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_server_that_never_reads_is_a_write_timeout(kind: str) -> None:
    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    timeout = httpx2.Timeout(2.0, write=0.3)
    async with raw_server(never_read) as url, client_for(kind, timeout=timeout) as client:
        with pytest.raises(httpx2.WriteTimeout):
            await client.post(url, content=b"x" * (48 << 20))


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_busy_pool_is_a_pool_timeout(kind: str) -> None:
    timeout = httpx2.Timeout(2.0, pool=0.2)
    held = (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", "hold")
    async with serve(lambda head, n: held if n == 0 else OK) as (url, seen), \
            client_for(kind, max_connections=1, timeout=timeout) as client:
        async with client.stream("GET", url) as first:
            assert first.status_code == 200
            with pytest.raises(httpx2.PoolTimeout):
                await client.get(url)
        assert (await client.get(url)).text == "ok"  # the slot came back


# ---------------------------------------------------------------- answers left unread

@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_answer_closed_unread_ends_its_connection_and_frees_its_slot(
        kind: str) -> None:
    big = (b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 5000, "hold")
    async with serve(lambda head, n: big if n == 0 else OK) as (url, seen), \
            client_for(kind, max_connections=1) as client:
        async with client.stream("GET", url) as first:
            async for _ in first.aiter_raw():
                break
        await until(lambda: 0 in seen.ended, "the half-read connection closed")
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel"],
                         ids=["before-the-head", "mid-body"])
async def test_a_request_cancelled_mid_answer_ends_its_connection_and_frees_its_slot(
        kind: str, answer: bytes) -> None:
    async with serve(lambda head, n: (answer, "hold") if n == 0 else OK) as (url, seen), \
            client_for(kind, max_connections=1) as client:
        asking = asyncio.create_task(client.get(url))
        await until(lambda: len(seen.requests) == 1, "the request arrived")
        await asyncio.sleep(0.05)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        await until(lambda: 0 in seen.ended, "the cancelled connection closed")
        assert (await client.get(url)).text == "ok"
        assert seen.accepts == 2


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_closing_the_client_mid_answer_ends_the_reading(kind: str) -> None:
    """Hearth stopping closes its clients: a body still coming must end in an error
    then (as httpcore's pool closes its connections), not run on to its read timeout."""
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst part,", "hold")
    async with serve(lambda head, n: answer) as (url, seen):
        client = client_for(kind, timeout=5.0)
        got = b""

        async def read_body() -> None:
            nonlocal got
            async with client.stream("GET", url) as streamed:
                async for chunk in streamed.aiter_raw():
                    got += chunk

        reading = asyncio.create_task(read_body())
        await until(lambda: bool(got), "the first part read")
        await client.aclose()
        with pytest.raises(httpx2.TransportError):
            await asyncio.wait_for(reading, 1)
        assert got == b"first part,"
        await until(lambda: 0 in seen.ended, "the connection closed")


# ---------------------------------------------------------------- requests

@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_large_bodies_both_ways_arrive_whole(kind: str) -> None:
    sent = os.urandom(6 << 20)
    back = os.urandom(7 << 20)
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(back)).encode() + b"\r\n\r\n" + back
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"".join(b"%x\r\n" % len(part) + part + b"\r\n"
                          for part in (back[i:i + 300_000] for i in range(0, len(back), 300_000)))
               + b"0\r\n\r\n")
    async with serve(lambda head, n: answer if b"/plain" in head else chunked) \
            as (url, seen), client_for(kind, timeout=5.0) as client:
        got = await client.post(url + "/plain", content=sent)
        assert hashlib.sha256(got.content).digest() == hashlib.sha256(back).digest()
        got = await client.post(url + "/chunked", content=sent)
        assert hashlib.sha256(got.content).digest() == hashlib.sha256(back).digest()
        assert [hashlib.sha256(body).digest() for _, _, body in seen.requests] \
            == [hashlib.sha256(sent).digest()] * 2
        assert seen.accepts == 1


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_a_streamed_request_body_arrives_whole(kind: str) -> None:
    async def parts() -> AsyncIterator[bytes]:
        for word in (b"one ", b"two ", b"three"):
            yield word

    async with serve(lambda head, n: OK) as (url, seen), client_for(kind) as client:
        assert (await client.post(url, content=parts())).text == "ok"
        assert seen.requests[0][2] == b"one two three"


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_the_request_line_and_headers_as_sent(kind: str) -> None:
    async with serve(lambda head, n: OK) as (url, seen), client_for(kind) as client:
        await client.get(url + "/p/a b;x?q=1&r=%2F&s=a+b",
                         headers=[("X-A", "1"), ("X-B", "2"), ("x-a", "3")])
        await client.post(url + "/empty")
        head = heads(seen)[0]
        request_line, *lines = head.split(b"\r\n")[:-2]
        assert request_line == b"GET /p/a%20b;x?q=1&r=%2F&s=a+b HTTP/1.1"
        names = [line.split(b":")[0].lower() for line in lines]
        assert names.count(b"host") == 1
        assert lines[0] == b"Host: " + url.removeprefix("http://").encode()
        assert [line for line in lines if line.lower().startswith(b"x-")] \
            == [b"X-A: 1", b"X-B: 2", b"x-a: 3"]
        assert b"content-length: 0\r\n" in heads(seen)[1].lower()


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("headers", [{"X-Evil": "a\r\nInjected: 1"}, {"X-Evil": "a\nb"},
                                     {"X-Evil\r\nInjected": "1"}, {"X Evil": "1"}])
async def test_a_header_that_would_split_the_request_is_refused(
        kind: str, headers: dict[str, str]) -> None:
    async with serve(lambda head, n: OK) as (url, seen), client_for(kind) as client:
        with pytest.raises(httpx2.LocalProtocolError):
            await client.get(url, headers=headers)
        assert seen.requests == []


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_an_answer_before_the_upload_is_taken_then_a_reset_is_a_network_error(
        kind: str) -> None:
    """A server answers (413) before reading a large body, and resets the connection.
    httpcore, on a write's error, goes on to read the answer, but its read then meets
    the reset (ReadError); Http1 raises the write's error. Neither passes the upload
    as taken."""
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Too Large\r\nContent-Length: 3\r\nConnection: close"
                     b"\r\n\r\nbig")
        writer.write_eof()
        await asyncio.sleep(0.3)
        writer.transport.abort()  # unread data: a reset, as a real server's close

    async with raw_server(refuse) as url, client_for(kind) as client:
        with pytest.raises(httpx2.NetworkError):
            await client.post(url, content=b"x" * (32 << 20))


# ---------------------------------------------------------------- use_http1

async def test_use_http1_takes_a_plain_client() -> None:
    client = httpx2.AsyncClient()
    assert use_http1(client, None) is True
    assert isinstance(client._transport, Http1)
    await client.aclose()


@pytest.mark.parametrize("make", [
    pytest.param(lambda: httpx2.AsyncClient(mounts={"all://": httpx2.AsyncHTTPTransport(
        proxy="http://127.0.0.1:9")}), id="proxy-mount"),
    pytest.param(lambda: httpx2.AsyncClient(proxy="http://127.0.0.1:9"), id="proxy"),
    pytest.param(lambda: httpx2.AsyncClient(
        transport=httpx2.MockTransport(lambda request: httpx2.Response(200))), id="mock"),
    pytest.param(lambda: httpx2.AsyncClient(http2=True), id="http2", marks=pytest.mark.skipif(
        importlib.util.find_spec("h2") is None, reason="h2 is not installed")),
    pytest.param(lambda: httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds="/tmp/nowhere.sock")), id="unix-socket"),
    pytest.param(lambda: httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.1")), id="local-address"),
    pytest.param(lambda: httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(retries=3)), id="retries")])
async def test_use_http1_leaves_other_clients_their_own_transport(
        make: Callable[[], httpx2.AsyncClient]) -> None:
    client = make()
    before = (client._transport, dict(client._mounts))
    assert use_http1(client, None) is False
    assert (client._transport, dict(client._mounts)) == before
    assert not isinstance(client._transport, Http1)
    await client.aclose()


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_use_http1_keeps_the_clients_connection_limits(kind: str) -> None:
    client = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=1),
                                timeout=httpx2.Timeout(2.0, pool=0.2))
    if kind == "http1":
        assert use_http1(client, None)
    held = (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", "hold")
    async with serve(lambda head, n: held) as (url, _), client:
        async with client.stream("GET", url):
            with pytest.raises(httpx2.PoolTimeout):
                await client.get(url)


def keepalive_to(port: int) -> list[int]:
    """SO_KEEPALIVE of this process's sockets connected to 127.0.0.1:port."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            with socket.fromfd(int(fd), socket.AF_INET, socket.SOCK_STREAM) as copy:
                if copy.getpeername() == ("127.0.0.1", port):
                    found.append(copy.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE))
    return found


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_the_sdks_tcp_keepalive_survives_use_http1(kind: str) -> None:
    """anthropic's client asks for TCP keepalive (socket options on its transport), so a
    long answer through a NAT is not dropped unseen: Http1 must ask for it too."""
    client = anthropic.DefaultAsyncHttpxClient()
    if kind == "http1":
        assert use_http1(client, None)
    async with serve(lambda head, n: OK) as (url, _), client:
        assert (await client.get(url)).text == "ok"
        assert keepalive_to(int(url.rsplit(":", 1)[1])) not in ([], [0])


# ---------------------------------------------------------------- the anthropic SDK

MESSAGE = {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
           "content": [{"type": "text", "text": "Hello there."}], "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 4}}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def json_answer(status: str, body: dict[str, Any], chunked: bool = False) -> bytes:
    data = json.dumps(body).encode()
    if chunked:
        return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\n").encode() \
            + b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


async def ask(url: str, client: httpx2.AsyncClient) -> Any:
    sdk = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0,
                                   http_client=client)
    return await sdk.messages.create(model="claude-test", max_tokens=16,
                                     messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
async def test_the_sdk_reads_a_message(kind: str, chunked: bool) -> None:
    answer = json_answer("200 OK", MESSAGE, chunked)
    async with serve(lambda head, n: answer) as (url, seen), client_for(kind) as client:
        message = await ask(url, client)
        assert message.content[0].text == "Hello there."
        assert message.usage.output_tokens == 4
        assert (await ask(url, client)).id == "msg_01"
        assert seen.accepts == 1
        head, body = seen.requests[0][1], seen.requests[0][2]
        assert head.startswith(b"POST /v1/messages HTTP/1.1\r\n")
        assert json.loads(body)["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_the_sdk_raises_overloaded_for_a_529(kind: str) -> None:
    answer = json_answer("529 Overloaded", OVERLOADED)
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        with pytest.raises(anthropic.APIStatusError) as raised:
            await ask(url, client)
        assert type(raised.value) is anthropic.OverloadedError
        assert raised.value.status_code == 529


@pytest.mark.parametrize("kind", TRANSPORTS)
async def test_the_sdk_sees_a_broken_connection_as_a_connection_error(kind: str) -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"id\":", "close")
    async with serve(lambda head, n: answer) as (url, _), client_for(kind) as client:
        with pytest.raises(anthropic.APIConnectionError):
            await ask(url, client)


# ---------------------------------------------------------------- warming

async def test_warmed_connections_carry_the_first_requests(tls) -> None:
    """`warm` opens connections (TLS included) before any request, and the first
    requests go on them: no more are accepted than were warmed."""
    serving, trusting = tls
    async with serve(lambda head, n: OK, tls=serving) as (url, seen):
        transport = Http1(trusting)
        async with httpx2.AsyncClient(transport=transport) as client:
            assert await transport.warm(httpx2.URL(url), 3) == 3
            await until(lambda: seen.accepts == 3, "three connections accepted")
            answers = await asyncio.gather(*(client.get(url) for _ in range(3)))
            assert [a.text for a in answers] == ["ok"] * 3
            assert seen.accepts == 3


async def test_warming_a_server_that_is_not_there_is_no_error() -> None:
    """A connection that cannot be opened now is left for a request to meet (and say)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]  # bound, never listening: connecting is refused
        transport = Http1()
        assert await transport.warm(httpx2.URL(f"http://127.0.0.1:{port}/"), 2) == 0
        async with httpx2.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx2.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")


async def test_the_sdks_clients_are_warmed_through_http1(monkeypatch) -> None:
    """`warm_connections` reaches an SDK client's Http1 (a test that fails if an SDK
    release keeps its HTTP client elsewhere), and leaves a proxied client alone."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with serve(lambda head, n: OK) as (url, seen):
        claude = new_client("test-key", 30, base_url=url)
        local = local_client(f"{url}/v1", "not-needed", 0, 30)
        try:
            assert await warm_connections(claude, 2) == 2
            assert await warm_connections(local, 1) == 1
            await until(lambda: seen.accepts == 3, "three connections accepted")
        finally:
            await claude.close()
            await local.close()
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        proxied = new_client("test-key", 30, base_url=url)
        assert await warm_connections(proxied, 2) == 0
        await proxied.close()
