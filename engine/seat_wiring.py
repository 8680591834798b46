"""Serving a world's seats (agents with `mind: seat`) while its engine runs.

    seats = await serve_seats(names, residents, config, data_dir, engine)

The seat mind speaks for them; its MCP server (adapters/seats/server.py) listens on
settings.yaml's `seats: {host, port}` from now until the engine closes. Each seat's
token comes from `data/seats.json` (storage/seats_file.py), made the first time; each
seat's state is kept in `data/seats_now.json` for watchers as it changes, and that note
goes when the engine closes.
"""

from __future__ import annotations

import errno
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.seats import SeatMind
from adapters.seats.server import SeatServer
from config import HearthConfig
from core.agent import Agent
from engine.engine import HearthEngine
from services.command_errors import EXIT_RUNTIME, CliError
from storage.errors import StorageError
from storage.seats_file import TOKENS_FILE, seat_tokens, write_states


@dataclass(frozen=True)
class ServedSeats:
    mind: SeatMind
    url: str
    tokens_file: Path
    public: bool
    """Served on an address other machines may reach (not the loopback)."""

    def line(self) -> str:
        """What a command says once the seats are served."""
        names = ", ".join(self.mind.seats)
        told = (f"Seats {names} served at {self.url} (tokens in {self.tokens_file}; "
                "README: Seats)")
        if self.public:
            told += (". Warning: this address may be reached from other machines, over "
                     "plain HTTP; only the tokens guard the seats")
        return told


def seat_mind(names: Sequence[str], residents: Sequence[Agent], config: HearthConfig,
              data_dir: Path) -> SeatMind:
    """The mind for these seats; its states are written to the watchers' note."""
    personalities = {a.name: a.personality for a in residents if a.name in names}
    mind = SeatMind(names, config.settings.seats.turn_seconds, personalities)
    mind.on_change = lambda: write_states(data_dir, mind.states())
    return mind


async def serve_seats(mind: SeatMind, config: HearthConfig, data_dir: Path,
                      engine: HearthEngine) -> ServedSeats:
    """Listen for the seats' clients until `engine` closes. A damaged tokens file or a
    taken address stops the run in one line, before the first tick."""
    settings = config.settings.seats
    try:
        tokens = seat_tokens(data_dir, list(mind.seats))
    except StorageError as exc:
        raise CliError(str(exc), EXIT_RUNTIME) from None
    server = SeatServer(mind, tokens, engine.tools, settings.host, settings.port)
    try:
        await server.start()
    except OSError as exc:
        hint = ("is another world running? set seats.port in settings.yaml"
                if exc.errno == errno.EADDRINUSE else
                "set seats.host in settings.yaml to an address of this machine")
        where = f"[{settings.host}]" if ":" in settings.host else settings.host
        raise CliError(f"cannot serve the seats at {where}:{settings.port}: "
                       f"{exc.strerror or exc} ({hint})", EXIT_RUNTIME) from None
    mind.stopping = lambda: engine.stop_requested
    write_states(data_dir, mind.states())

    async def stop() -> None:
        await server.stop()
        write_states(data_dir, None)

    engine.on_close.append(stop)
    return ServedSeats(mind, server.url, Path(data_dir) / TOKENS_FILE,
                       not _loopback(settings.host))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
