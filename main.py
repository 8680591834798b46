"""Hearth's command line: parses the flags and hands each command to its module.

    hearth                 open the world (creating it on first run) and show it
    hearth --init          create a new world (--seed N, --size WxH, --agents N, --force)
    hearth --status        summarise the world (--json for machines)
    hearth --check         list every damaged row of the world, changing nothing
    hearth --map [PATH]    draw the world: in the terminal, or as a PNG image at PATH
    hearth --run N         live N ticks (creating the world first if needed); --quiet, --json

Exit codes: 0 success, 1 a runtime problem (no world, unreadable database),
2 a usage or configuration mistake, 130 a run stopped by Ctrl+C. A user's mistake
never shows a traceback.

Each command lives beside the layer it wires: the flags in `observe/command_line.py`;
--status and --check in `services/status_command.py`; --init in
`services/init_command.py`; --map, --run and the observer (plain `hearth`, --watch) in
`observe/map_command.py`, `run_command.py` and `watch_command.py`, over the engine as
`engine/wiring.py` builds it; --gardener in `adapters/gardener_command.py`; --fork in
`engine/fork.py`; --compare in `storage/world_compare.py`. What is left here is
dispatch, and turning every failure into one line and an exit code.
"""

from __future__ import annotations

import os

# Before numpy loads: Hearth's matrices are small, and BLAS threads spinning
# against the engine's own threads made world generation 3x slower under load.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import asyncio
import logging
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from config import ConfigError, RuntimeEnv, load_config
from logging_config import setup_logging
from observe.command_line import parse_args
from services.command_errors import EXIT_INTERRUPTED, EXIT_RUNTIME, EXIT_USAGE, CliError
from storage import StorageError

if TYPE_CHECKING:
    from observe.watch_command import Watch
from storage.database_faults import database_fault

log = logging.getLogger("hearth")

PROJECT_DIR = Path(__file__).resolve().parent


async def run(args: argparse.Namespace) -> int | Watch:
    """The command the flags name, run to its exit code (or a request to watch). Each
    command's module is imported when it is chosen: the engine, the map and the progress
    bars cost a third of a second to import, which `--status` need not wait for."""
    config = load_config(args.config_dir)
    from storage import direct_db  # how long every connection waits for others' locks

    direct_db.LOCK_PATIENCE = config.settings.storage.lock_patience_seconds
    env = RuntimeEnv.resolve(os.environ, PROJECT_DIR, args.data_dir, args.agents_dir)
    log.debug("data dir %s, agents dir %s", env.data_dir, env.agents_dir)
    for what, folder in (("data", env.data_dir), ("agents", env.agents_dir)):
        if folder.exists() and not folder.is_dir():
            raise CliError(f"{folder}: the {what} folder is a file, not a folder; move it "
                           f"aside or choose another with --{what}-dir", EXIT_RUNTIME)
    if args.status:
        from services.status_command import show_status
        return await show_status(env, config, args.json)
    if args.check:
        from services.status_command import check_world_rows
        return await check_world_rows(env)
    if args.init:
        from observe.progress import creation_progress
        from services.init_command import init_world
        return await init_world(env, config, seed=args.seed, size=args.size,
                                agents=args.agents, force=args.force, bar=creation_progress)
    if args.map is not None:
        from observe.map_command import draw_map
        return await draw_map(env, args.map)
    if args.fork is not None:  # issue 30: branchable history
        from engine.fork import fork_command
        return await fork_command(env, config, args.fork, args.into,
                                  dict(args.personality or ()))
    if args.compare:
        from storage.world_compare import compare_command
        return compare_command(*args.compare, as_json=args.json)
    if args.gardener:
        from adapters.gardener_command import run_gardener
        return await run_gardener(env, config, once=args.once)
    if args.run:
        from observe.run_command import run_world
        return await run_world(env, config, args.run, quiet=args.quiet, as_json=args.json,
                               mind=args.mind, economy=args.economy)
    if args.serve:
        from observe.serve_command import serve_request
        return serve_request(env, args.config_dir, args.host, args.port, public=args.public)
    from observe.watch_command import open_world
    return await open_world(env, config, args.mind, create=not args.watch,
                            view_only=args.view_only)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `hearth` with `argv` (else the process's arguments) and return the exit code:
    every failure a user can meet is said here in one line, never as a traceback."""
    args = parse_args(argv, PROJECT_DIR)
    setup_logging(args.debug)
    try:
        outcome = asyncio.run(run(args))
        if isinstance(outcome, int):
            return outcome
        from observe.serve_command import Serve, serve
        if isinstance(outcome, Serve):
            return serve(outcome)
        from observe.watch_command import watch
        return watch(outcome)
    except ConfigError as exc:
        print(f"hearth: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (StorageError, CliError) as exc:
        print(f"hearth: {exc}", file=sys.stderr)
        return getattr(exc, "code", EXIT_RUNTIME)
    except BrokenPipeError:
        # Whoever read the output has gone (`hearth --run 500 | head`): every tick printed
        # was committed first, so stop without a word, as a pipe's writer does.
        _drop_stdout()
        return EXIT_RUNTIME
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"hearth: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_RUNTIME
    except sqlite3.Error as exc:  # a fault, not a bug: one line, what was committed stays
        where = Path(args.data_dir or os.environ.get("HEARTH_DATA_DIR") or PROJECT_DIR / "data")
        print(f"hearth: {database_fault(exc, where)}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        print("hearth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _drop_stdout() -> None:
    """Point stdout at the null device, so flushing it at exit cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file behind stdout (tests, embedding)
        pass


def cli() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
