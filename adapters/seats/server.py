"""The world's seats served over MCP's streamable HTTP transport, with the official SDK.

    server = SeatServer(mind, tokens, tools=engine.tools, host="127.0.0.1", port=8765)
    await server.start()          # listening when it returns; OSError if the port is taken
    ...
    await server.stop()

The tools are the registry's, one door as for every mind (the same names,
descriptions and input schemas), plus `wait_for_turn` and `end_turn`. Every request
carries a seat's token (`Authorization: Bearer`): the SDK's bearer middleware answers
401 to one without a token it knows, and binds an MCP session to the token that
opened it (another token on that session is "Session not found", 404). The seat a
token selects is its `client_id`. What a call may do is the seat's to say
(adapters/seats/seat.py): out of turn, a held seat, bad input or an unknown tool is a
JSON-RPC error and changes nothing; an action the world refuses is a tool result
marked `isError`, with the narration a Claude agent would read.

The server runs on the engine's own event loop (uvicorn, with the signals left to the
program that owns them), so a call reaches the engine without crossing threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import json
import logging
import resource
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import jsonschema
import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from adapters.seats.mind import SeatMind
from adapters.seats.seat import Seat, SeatRefused
from services.mind import ToolCall, ToolSpec

log = logging.getLogger("hearth.seats")

SESSION_HEADER = "mcp-session-id"
SESSIONLESS = "(sessionless)"
"""The holder of a seat whose client speaks the 2026-07-28 protocol, which has no
sessions: its token alone says who it is."""
SHUTDOWN_SECONDS = 0.5
"""How long uvicorn waits for open streams when the world stops (waits are ended first)."""
MOST_CONNECTIONS = 64
"""Connections open at once; one more is closed at once, so no flood of them can take
the file handles the world needs."""
FIRST_REQUEST_SECONDS = 10.0
"""A connection that has not sent a whole request by then is closed (a slow trickle of
headers holds nothing for long)."""
MOST_BODY_BYTES = 256 * 1024
MOST_ARGUMENT_BYTES = 96 * 1024
"""A call's arguments, as JSON: room for the largest file an agent may write (64 KiB)."""
SESSIONS_PER_SEAT = 8

INSTRUCTIONS = """\
Hearth is a world where agents live. This server gives you one agent's seat: your \
token says which. Call wait_for_turn; when it is your turn it returns who you are \
(on your first turn), what your agent perceives, and any news. Then act with the \
world's tools, one call at a time, each answered with what came of it, and call \
end_turn when you are done. A turn in which you do nothing passes, and that is fine."""

WAIT_FOR_TURN = ToolSpec(
    "wait_for_turn",
    "Wait for your agent's next turn (up to a minute) and return what it perceives: "
    "the same text an agent of the world reads. If the turn has not come yet, it says "
    "so; call it again. During your turn it returns the turn again.",
    {"type": "object", "properties": {}, "additionalProperties": False})
END_TURN = ToolSpec(
    "end_turn", "End your agent's turn now; the world goes on.",
    {"type": "object", "properties": {}, "additionalProperties": False})


class SeatTokens:
    """The SDK's TokenVerifier: a token names exactly one seat (its client_id)."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self.tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        for name, secret in self.tokens.items():
            if hmac.compare_digest(token.encode(), secret.encode()):
                return AccessToken(token=token, client_id=name, scopes=["seat"])
        return None


class _QuietServer(uvicorn.Server):
    """uvicorn that leaves SIGINT and SIGTERM to the program (Ctrl+C finishes the turn)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class _GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a cap on open connections and a deadline for a
    connection's first request."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MOST_CONNECTIONS:
            transport.close()
            return
        self.loop.call_later(FIRST_REQUEST_SECONDS, self._first_request_due)

    def _first_request_due(self) -> None:
        if self.cycle is None and not self.transport.is_closing():
            self.transport.close()


class _AcceptFlood(logging.Filter):
    """asyncio logs every accept() that finds no file handle left, with a traceback: a
    flood of connections would write thousands. One line a minute says it instead."""

    def __init__(self) -> None:
        super().__init__()
        self.said = -60.0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = time.monotonic()
        if now - self.said < 60:
            return False
        self.said = now
        record.msg, record.args, record.exc_info = (
            "the seats' server has no file handle left for new connections (too many "
            "at once); it takes them again as others close", (), None)
        return True


_ACCEPT_FLOOD = _AcceptFlood()


def _more_file_handles() -> None:
    """Let this process open as many files as the system allows it (the soft limit up to
    the hard one), so the world keeps room for its own beside its clients."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1 << 20), hard))
    except (ValueError, OSError):  # not ours to raise here: the limits stay
        return


class SeatServer:
    def __init__(self, mind: SeatMind, tokens: Mapping[str, str],
                 tools: Sequence[ToolSpec], host: str, port: int) -> None:
        self.mind = mind
        self.host, self.port = host, port
        self.tools = {spec.name: spec for spec in (*tools, WAIT_FOR_TURN, END_TURN)}
        self.listed = [types.Tool(name=s.name, description=s.description,
                                  input_schema=dict(s.input_schema))
                       for s in self.tools.values()]
        self.ids = itertools.count(1)
        self.mcp = Server("hearth", version="1", instructions=INSTRUCTIONS,
                          on_list_tools=self._list_tools, on_call_tool=self._call_tool,
                          get_tool_input_schema=self._schema)
        url = f"http://{_url_host(host)}:{port}"
        app = self.mcp.streamable_http_app(
            host=host, token_verifier=SeatTokens(tokens),
            auth=AuthSettings(issuer_url=url, resource_server_url=None),  # type: ignore[arg-type]
            max_request_body_size=MOST_BODY_BYTES,
            max_sessions=SESSIONS_PER_SEAT * max(1, len(tokens)),
            session_idle_timeout=max(300.0, 4 * mind.turn_seconds))
        self.app = _Sessions(app, mind, SeatTokens(tokens))
        self.url = f"{url}/mcp"
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen now (OSError when the address is taken or refused), then serve."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(64)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        _more_file_handles()
        if _ACCEPT_FLOOD not in logging.getLogger("asyncio").filters:
            logging.getLogger("asyncio").addFilter(_ACCEPT_FLOOD)
        # uvicorn's own log says only what stops it: a client cut off as the world stops
        # is no news to the person at the terminal.
        config = uvicorn.Config(self.app, log_level="critical", lifespan="on",
                                http=_GuardedH11, timeout_graceful_shutdown=SHUTDOWN_SECONDS,
                                access_log=False)
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()  # what stopped it, raised here

    async def stop(self) -> None:
        self.mind.close()  # every wait ends, no call is taken
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(self._task, SHUTDOWN_SECONDS + 3)
        except Exception:  # noqa: BLE001 - a server stuck stopping (TimeoutError too)
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    # ------------------------------------------------------------------ MCP handlers

    async def _list_tools(self, ctx: ServerRequestContext[Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.listed)

    def _schema(self, name: str) -> Mapping[str, Any] | None:
        spec = self.tools.get(name)
        return spec.input_schema if spec is not None else None

    async def _call_tool(self, ctx: ServerRequestContext[Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        seat, holder = self._seat_of(ctx)
        spec = self.tools.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools/list "
                           "names every tool a seat has")
        arguments = dict(params.arguments or {})
        if len(json.dumps(arguments, ensure_ascii=False)) > MOST_ARGUMENT_BYTES:
            raise MCPError(types.INVALID_PARAMS, f"bad input for {params.name}: the arguments "
                           f"are over {MOST_ARGUMENT_BYTES // 1024} KiB")
        try:
            jsonschema.validate(arguments, dict(spec.input_schema))
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path)
            raise MCPError(types.INVALID_PARAMS, f"bad input for {params.name}"
                           f"{' at ' + where if where else ''}: {exc.message}") from None
        try:
            if spec is WAIT_FOR_TURN:
                return await self._wait(seat, holder)
            if spec is END_TURN:
                seat.end_turn(holder)
                return _text([f"{seat.name}'s turn is over."])
            outcome = await seat.act(holder, ToolCall(f"seat-{next(self.ids)}", spec.name,
                                                      arguments))
        except SeatRefused as exc:
            raise MCPError(types.INVALID_REQUEST, str(exc)) from None
        return _text([outcome.text], error=not outcome.success)

    async def _wait(self, seat: Seat, holder: str) -> types.CallToolResult:
        turn = await seat.wait_for_turn(holder)
        if turn is None:
            return _text([f"{seat.name}'s turn has not come yet; call wait_for_turn again."])
        return _text(self.mind.turn_text(seat, holder, turn))

    def _seat_of(self, ctx: ServerRequestContext[Any]) -> tuple[Seat, str]:
        request = ctx.request
        user = getattr(request, "user", None)
        token = getattr(user, "access_token", None)
        seat = self.mind.seats.get(getattr(token, "client_id", ""))
        if seat is None:  # the bearer middleware lets no such request through
            raise MCPError(types.INVALID_REQUEST, "no seat's token came with the request")
        headers = getattr(request, "headers", {})
        return seat, headers.get(SESSION_HEADER) or SESSIONLESS


class _Sessions:
    """Lets a seat go as soon as the session holding it ends (an HTTP DELETE that the SDK
    answered 2xx: the session's own token ended it). Only that token's seat is let go,
    and only by the session id the SDK itself read (the first such header)."""

    def __init__(self, app: Any, mind: SeatMind, tokens: SeatTokens) -> None:
        self.app, self.mind, self.tokens = app, mind, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        status = 0

        async def sending(message: Any) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
            await send(message)

        await self.app(scope, receive, sending)
        headers = list(scope.get("headers") or ())
        session = next((v for k, v in headers if k == SESSION_HEADER.encode()), None)
        auth = next((v for k, v in headers if k == b"authorization"), b"")
        if not session or not 200 <= status < 300 or not auth.lower().startswith(b"bearer "):
            return
        token = await self.tokens.verify_token(auth[7:].decode("latin-1").strip())
        seat = self.mind.seats.get(token.client_id) if token is not None else None
        holder = session.decode("latin-1")
        if seat is not None and holder != SESSIONLESS:
            seat.release(holder)


def _text(parts: Sequence[str], error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=p) for p in parts],
                                is_error=error)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
