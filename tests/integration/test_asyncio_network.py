"""adapters/asyncio_network.py against real sockets: TCP on 127.0.0.1, TLS with a CA
made for the test (trustme), an HTTP CONNECT proxy, servers that go quiet, close or
reset, and the two SDKs' clients sending through it.

What a stream must do is what httpcore asks of its network backends (httpcore2's
`AsyncNetworkStream`: read returns b"" at the end of the stream; timeouts and
failures are raised as httpcore's ReadTimeout, WriteTimeout, ReadError, WriteError,
ConnectError, ConnectTimeout), and an idle connection the server closed must read as
"is_readable", which is how httpcore knows not to send on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable

import anthropic
import httpcore2
import httpx2
import pytest
import trustme

from adapters.asyncio_network import PAUSE_ABOVE, AsyncioNetwork, use_asyncio_network
from adapters.claude_setup import new_client
from adapters.http1 import Http1
from adapters.openai_mind import local_client
from tests.fake_openai import reply
from tests.integration.conftest import tls_pair
from tests.messages_standin import StrictMessagesApi

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def server(handle: Handler, *, tls: ssl.SSLContext | None = None
                 ) -> AsyncIterator[tuple[int, list[int]]]:
    """A server on 127.0.0.1 running `handle` per connection; its port and a list that
    counts the connections made."""
    made: list[int] = []

    async def each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        made.append(1)
        try:
            await handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(each, "127.0.0.1", 0, ssl=tls)
    try:
        yield listening.sockets[0].getsockname()[1], made
    finally:
        listening.close()


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(30)


async def test_bytes_written_come_back_in_order() -> None:
    async with server(echo) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.write(b"GET / HTTP/1.1\r\n")
        await stream.write(b"\r\n")
        got = b""
        while len(got) < 18:
            got += await stream.read(65536, timeout=5)
        assert got == b"GET / HTTP/1.1\r\n\r\n"
        assert stream.get_extra_info("server_addr")[1] == port
        assert stream.get_extra_info("client_addr")[0] == "127.0.0.1"
        assert stream.get_extra_info("socket").family == socket.AF_INET
        assert stream.get_extra_info("ssl_object") is None
        assert stream.get_extra_info("no such thing") is None
        await stream.aclose()


async def test_a_read_that_gets_nothing_times_out() -> None:
    async with server(silent) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(1024, timeout=0.1)
        assert 0.09 <= loop.time() - began < 2
        await stream.aclose()


async def test_the_end_of_the_stream_reads_empty_and_marks_the_connection_readable() -> None:
    closing = asyncio.Event()

    async def answer_then_close(reader: asyncio.StreamReader,
                                writer: asyncio.StreamWriter) -> None:
        writer.write(b"bye")
        await closing.wait()

    async with server(answer_then_close) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        assert await stream.read(10, timeout=5) == b"bye"
        assert stream.get_extra_info("is_readable") is False  # idle and open
        closing.set()
        assert await stream.read(10, timeout=5) == b""
        assert stream.get_extra_info("is_readable") is True  # httpcore will not reuse it
        await stream.aclose()
        with pytest.raises(httpcore2.WriteError):
            await stream.write(b"more")
        with pytest.raises(httpcore2.ReadError):  # closed here: not the server's end
            await stream.read(10, timeout=5)


async def test_a_reset_connection_is_a_read_error() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = writer.get_extra_info("socket")
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # linger 0: the peer gets RST, not FIN

    async with server(reset) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ReadError):
            await stream.read(10, timeout=5)
        assert stream.get_extra_info("is_readable") is True


async def test_a_write_the_peer_will_not_take_waits_for_room_and_times_out() -> None:
    async with server(silent) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.WriteTimeout):
            await stream.write(b"x" * (64 << 20), timeout=0.2)  # more than any socket buffers
        await stream.aclose()


async def test_a_large_answer_arrives_whole_through_paused_reading() -> None:
    blob = bytes(range(256)) * ((3 * PAUSE_ABOVE) // 256)

    async def send_blob(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(blob)
        await writer.drain()

    async with server(send_blob) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        await asyncio.sleep(0.2)  # let more than PAUSE_ABOVE arrive unread
        held = len(stream._buffered.data)  # the rest waits in the kernel's buffers
        got = bytearray()
        while chunk := await stream.read(65536, timeout=5):
            got += chunk
        assert PAUSE_ABOVE < held <= PAUSE_ABOVE + (256 << 10)  # one read of asyncio's past
        assert bytes(got) == blob


async def test_a_port_nobody_listens_on_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(httpcore2.ConnectError):
        await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
    with pytest.raises(httpcore2.ConnectError):
        await AsyncioNetwork().connect_tcp("no-such-host.invalid", 443, timeout=5)


async def test_connecting_past_the_timeout_is_a_connect_timeout() -> None:
    async with server(silent) as (port, _):
        with pytest.raises(httpcore2.ConnectTimeout):
            await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=0)


async def test_socket_options_are_set() -> None:
    async with server(echo) as (port, _):
        stream = await AsyncioNetwork().connect_tcp(
            "127.0.0.1", port, timeout=5,
            socket_options=[(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)])
        assert stream.get_extra_info("socket").getsockopt(
            socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        await stream.aclose()


async def test_tls_is_started_on_an_open_connection(authority: trustme.CA) -> None:
    serving, trusting = tls_pair(authority)
    async with server(echo, tls=serving) as (port, _):
        plain = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        secured = await plain.start_tls(trusting, server_hostname="localhost", timeout=5)
        assert secured.get_extra_info("ssl_object").version().startswith("TLS")
        await secured.write(b"hello over tls")
        got = b""
        while len(got) < 14:
            got += await secured.read(1024, timeout=5)
        assert got == b"hello over tls"
        await secured.aclose()


async def test_tls_to_the_wrong_name_is_a_connect_error(authority: trustme.CA) -> None:
    serving, trusting = tls_pair(authority)
    async with server(echo, tls=serving) as (port, _):
        plain = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ConnectError):
            await plain.start_tls(trusting, server_hostname="api.anthropic.com", timeout=5)


async def test_a_handshake_that_never_comes_is_a_connect_timeout(authority: trustme.CA) -> None:
    _, trusting = tls_pair(authority)
    async with server(silent) as (port, _):  # a plain server that never answers
        plain = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        with pytest.raises(httpcore2.ConnectTimeout):
            await plain.start_tls(trusting, server_hostname="localhost", timeout=0.2)


# ---------------------------------------------------------------- through httpx2 and the SDKs

def http_answer(body: bytes, *, close: bool = False) -> bytes:
    head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n" + ("connection: close\r\n" if close else "")
            + "\r\n")
    return head.encode() + body


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    size = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            size = int(value)
    return await reader.readexactly(size) if size else b""


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    """A server that ends keep-alive connections on its own (an idle timeout) without
    saying so: the next request must go on a new connection, not fail on the old one."""
    async def one_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(http_answer(b'{"ok": true}'))
        await writer.drain()
        await asyncio.sleep(0.05)  # then the server's idle timeout ends it

    async with server(one_answer) as (port, made):
        client = httpx2.AsyncClient()
        assert use_asyncio_network(client) == 1
        for _ in range(3):
            answer = await client.get(f"http://127.0.0.1:{port}/")
            assert answer.json() == {"ok": True}
            await asyncio.sleep(0.2)
        await client.aclose()
        assert len(made) == 3


async def test_keep_alive_connections_are_reused() -> None:
    async def answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(http_answer(b'{"n": 1}'))
            await writer.drain()

    async with server(answers) as (port, made):
        client = httpx2.AsyncClient()
        use_asyncio_network(client)
        for _ in range(5):
            assert (await client.post(f"http://127.0.0.1:{port}/", content=b"x" * 5000)
                    ).json() == {"n": 1}
        await client.aclose()
        assert len(made) == 1


async def test_https_through_a_connect_proxy(authority: trustme.CA,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's client finds the proxy in the environment (HTTPS_PROXY) as it always
    did; the proxy's pool connects through AsyncioNetwork, and TLS starts inside the
    tunnel."""
    serving, trusting = tls_pair(authority)

    async def origin(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(http_answer(b'{"through": "tunnel"}', close=True))
        await writer.drain()

    tunnels: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        tunnels.append(head.split(b"\r\n")[0])
        host, _, port = head.split()[1].decode().rpartition(":")
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async with server(origin, tls=serving) as (origin_port, _), \
            server(proxy) as (proxy_port, _):
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy_port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        client = anthropic.DefaultAsyncHttpxClient(verify=trusting)
        assert use_asyncio_network(client) == 2  # the default pool and the proxy's
        answer = await client.get(f"https://localhost:{origin_port}/")
        await client.aclose()
    assert answer.json() == {"through": "tunnel"}
    assert tunnels == [f"CONNECT localhost:{origin_port} HTTP/1.1".encode()]


def test_the_sdks_clients_are_built_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """If an SDK or httpx2 release builds its clients otherwise, this fails rather than
    the saving going quietly: direct requests go through Http1 (adapters/http1.py, on
    these streams), and with a proxy named every pool is on AsyncioNetwork."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    claude = new_client("test-key", 30)
    local = local_client("http://127.0.0.1:9/v1", "not-needed", 0, 30)
    for client in (claude, local):
        assert isinstance(client._client._transport, Http1)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    for client in (new_client("test-key", 30),
                   local_client("http://127.0.0.1:9/v1", "not-needed", 0, 30)):
        transports = [client._client._transport, *client._client._mounts.values()]
        pools = [t._pool for t in transports if t is not None]
        assert len(pools) == 2
        assert all(isinstance(p._network_backend, AsyncioNetwork) for p in pools)


def test_a_client_of_another_make_is_left_alone() -> None:
    class Elsewhere:
        _transport = object()

    assert use_asyncio_network(Elsewhere()) == 0
    assert use_asyncio_network(httpx2.AsyncClient(transport=httpx2.MockTransport(
        lambda request: httpx2.Response(200)))) == 0


async def test_claude_requests_over_a_real_socket() -> None:
    """The real SDK, sending through Http1 on these streams, to the strict stand-in
    served on 127.0.0.1 (HTTP/1.1 keep-alive, as the API serves): one connection, kept."""
    api = StrictMessagesApi()
    with api.serve(keep_alive=True) as url:
        client = new_client("test-key", 30, base_url=url)
        for word in ("one", "two", "three"):
            message = await client.messages.create(
                model="claude-sonnet-5-5", max_tokens=1024,
                messages=[{"role": "user", "content": f"Say {word}."}])
            assert message.role == "assistant" and message.content
        kept = client._client._transport._idle
        assert [len(conns) for conns in kept.values()] == [1]
        await client.close()
    assert len(api.served) == 3 and not api.refused


async def test_a_local_model_request_over_a_real_socket() -> None:
    async def chat(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = json.loads(await read_request(reader))
        assert body["model"] == "local-test"
        writer.write(http_answer(json.dumps(reply("Hello.")).encode(), close=True))
        await writer.drain()

    async with server(chat) as (port, made):
        client = local_client(f"http://127.0.0.1:{port}/v1", "not-needed", 0, 30)
        completion = await client.chat.completions.create(
            model="local-test", messages=[{"role": "user", "content": "Hi"}])
        await client.close()
    assert completion.choices[0].message.content == "Hello."
    assert len(made) == 1


async def test_a_write_waiting_for_room_ends_when_the_stream_is_closed() -> None:
    """Closed from elsewhere (a stop) while a write waits on a peer that reads nothing:
    the write ends in WriteError at once, not when the peer has read it all (never)."""
    async with server(silent) as (port, _):
        stream = await AsyncioNetwork().connect_tcp("127.0.0.1", port, timeout=5)
        writing = asyncio.ensure_future(stream.write(b"x" * (64 << 20), timeout=None))
        await asyncio.sleep(0.1)
        assert not writing.done()
        await stream.aclose()
        with pytest.raises(httpcore2.WriteError):
            await asyncio.wait_for(writing, 2)
