"""`hearth --serve`: the live observer in a browser, through Textual's own textual-serve.

    hearth --serve                      # http://127.0.0.1:8000, Ctrl+C stops
    hearth --serve --host 0.0.0.0 --public --port 8080

Each page that opens starts its own observer process (textual-serve's way: the app runs
as `hearth --watch` on Textual's web driver). The one-writer rule holds between them as
between terminals: the first page runs the world, the others watch it. A host other
than this machine alone needs `--public`, and then every page only watches
(`--view-only`), so nobody out there can run or pause the world. What can go wrong
before serving (no world, a bad host, the port taken) is one line, exit 2 or 1.
*Why textual-serve:* it is Textual's authors' own server for exactly this; its one
process a page keeps each page's observer as isolated as a terminal's.
"""

from __future__ import annotations

import ipaddress
import shlex
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from config import RuntimeEnv
from services.command_errors import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, CliError
from storage import Storage

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
QUIT_WITHIN = 10.0
"""Seconds a page's observer has to quit (its tick in flight) before it is ended."""
PROJECT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Serve:
    """What `serve` runs once the command's own event loop is done (the web server
    runs a loop of its own)."""

    command: str
    host: str
    port: int
    url: str


def serve_request(env: RuntimeEnv, config_dir: Path | None, host: str | None,
                  port: int | None, *, public: bool = False) -> Serve:
    """Check what can be checked before serving; raises CliError with one line."""
    host = host or DEFAULT_HOST
    port = port or DEFAULT_PORT
    if not Storage.world_exists(env.data_dir):
        raise CliError(f"no world in {env.data_dir} yet: create one with "
                       f"`{env.command('--init')}`, then serve it", EXIT_USAGE)
    addresses = _addresses(host)
    if not public and not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise CliError(f"--host {host} is reachable from other machines: add --public to "
                       "serve it there (its pages only watch the world)", EXIT_USAGE)
    _check_port(addresses[0], port)
    args = [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(env.data_dir),
            "--agents-dir", str(env.agents_dir), "--watch"]
    if config_dir is not None:
        args += ["--config-dir", str(config_dir)]
    if public:
        args.append("--view-only")
        print(f"warning: serving on {host}: anyone who can reach port {port} there can "
              "watch this world (pages only watch: none can run or pause it)",
              file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    # exec: the page's process is the observer itself, not a shell around it, so
    # ending it ends the observer.
    return Serve("exec " + shlex.join(args), host, port, f"http://{shown}:{port}")


def serve(request: Serve) -> int:
    """Serve until Ctrl+C (or SIGTERM): textual-serve then asks every page's observer to
    quit, each finishing its tick in flight, and waits for them."""
    import asyncio

    import textual_serve.server as served
    from aiohttp import web
    from textual_serve.app_service import AppService

    pages: set[AppService] = set()

    class _Page(AppService):  # every page's observer, known to the server
        async def start(self, width: int, height: int) -> None:
            pages.add(self)
            await super().start(width, height)

        async def stop(self) -> None:
            # Asked to quit, the observer finishes its tick in flight and goes; one
            # whose page vanished without a word may not hear it: it is ended.
            try:
                await asyncio.wait_for(super().stop(), QUIT_WITHIN)
                process = self._process
                if process is not None and process.returncode is None:
                    await asyncio.wait_for(process.wait(), QUIT_WITHIN)
            except (TimeoutError, OSError, RuntimeError):
                _end(self)
            finally:
                pages.discard(self)

    class _Quiet(served.Server):
        async def on_startup(self, app: object) -> None:  # no banner: one line, below
            pass

        async def on_shutdown(self, app: object) -> None:
            # Every page still open is asked to quit, and ended if it will not: no
            # observer outlives the server (textual-serve alone leaves them running).
            await asyncio.gather(*(page.stop() for page in list(pages)),
                                 return_exceptions=True)

    served.AppService = _Page  # type: ignore[misc]

    server = _Quiet(request.command, host=request.host, port=request.port, title="Hearth",
                    public_url=request.url)
    server.initialize_logging()
    server.debug = False
    loop = asyncio.new_event_loop()
    for stop in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(stop, server.request_exit)
    # aiohttp calls `print` once the socket listens: the line a page can be opened after.
    web.run_app(server._make_app(), host=request.host, port=request.port, loop=loop,
                handle_signals=False, print=lambda *_: print(
                    f"Serving the observer at {request.url} (Ctrl+C stops)", flush=True))
    return EXIT_OK


def _addresses(host: str) -> list[str]:
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise CliError(f"--host {host}: not an address this machine can listen on "
                       f"({getattr(exc, 'strerror', None) or exc})", EXIT_USAGE) from None
    return [str(info[4][0]) for info in found]


def _check_port(address: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError as exc:
            why = "is in use" if exc.errno == 98 else f"cannot be used ({exc.strerror})"
            raise CliError(f"port {port} on {address} {why}: choose another with --port",
                           EXIT_RUNTIME) from None


def _end(page: object) -> None:
    """End a page's observer that did not quit when asked (its process is Python
    itself: the command is exec'd by the shell textual-serve starts it in)."""
    process = getattr(page, "_process", None)
    if process is not None and process.returncode is None:
        try:
            process.kill()
        except ProcessLookupError:
            pass
