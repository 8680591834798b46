"""Hearth's command line: wires config, storage and services together.

    hearth                 open the world (creating it on first run) and show it
    hearth --init          create a new world
    hearth --status        summarise the world (--json for machines)

Exit codes: 0 success, 1 a runtime problem (no world, unreadable database),
2 a usage or configuration mistake. A user's mistake never shows a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from config import ConfigError, HearthConfig, RuntimeEnv, load_config
from logging_config import setup_logging
from services.status import WorldStatus, world_status
from services.world_setup import WorldSetupError, create_world
from storage import Storage, StorageError
from storage.database import backup_to, utc_stamp

log = logging.getLogger("hearth")

PROJECT_DIR = Path(__file__).resolve().parent
EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """A problem to report on one line, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.code = code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hearth",
        description="Hearth: a grid world where language-model agents live. "
        "With no command, opens the world (creating it on first run) and shows it.",
    )
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="where world.db, events and traces live "
                             "(default: $HEARTH_DATA_DIR or ./data)")
    parser.add_argument("--agents-dir", type=Path, metavar="DIR",
                        help="agents' home folders (default: $HEARTH_AGENTS_DIR or ./agents)")
    parser.add_argument("--config-dir", type=Path, metavar="DIR",
                        help="folder with settings.yaml, agents.yaml, recipes.yaml, "
                             "terrain.yaml (default: the shipped config)")
    parser.add_argument("--debug", action="store_true", help="verbose logging to stderr")
    command = parser.add_mutually_exclusive_group()
    command.add_argument("--status", action="store_true", help="summarise the world and exit")
    command.add_argument("--init", action="store_true", help="create a new world and exit")
    parser.add_argument("--json", action="store_true", help="with --status: machine-readable")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="with --init: the world seed (default: settings or random)")
    parser.add_argument("--force", action="store_true",
                        help="with --init: replace an existing world (it is backed up first)")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.json and not args.status:
        parser.error("--json goes with --status")
    if (args.seed is not None or args.force) and not args.init:
        parser.error("--seed and --force go with --init")
    return args


# --- commands -----------------------------------------------------------------------


def format_status(status: WorldStatus) -> str:
    if not status.initialised:
        return f"{status.db_path}: the database exists but holds no world yet (run hearth --init)"
    lines = [
        f"Hearth world  {status.db_path}",
        f"  size {status.width}x{status.height}   seed {status.seed}   tick {status.tick}"
        f"   weather {status.weather}",
        f"  schema v{status.schema_version}   {status.db_bytes / 1024:.0f} KiB   "
        + "   ".join(f"{k.replace('_', ' ')} {v}" for k, v in status.counts.items()),
        f"  agents ({len(status.agents)}):",
    ]
    for a in status.agents:
        state = "asleep" if a.sleeping else ("journeying" if a.journeying else "awake")
        lines.append(f"    {a.name:<12} ({a.x}, {a.y})  {state:<10} {a.model_id}")
    return "\n".join(lines)


async def show_status(env: RuntimeEnv, as_json: bool) -> int:
    if not Storage.world_exists(env.data_dir):
        message = (
            f"No world in {env.data_dir} yet. Create one with `hearth --init` "
            "(or just `hearth`)."
        )
        if as_json:
            print(json.dumps({"error": "no_world", "message": message}))
        else:
            print(message)
        return EXIT_RUNTIME
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        status = await world_status(storage)
    print(json.dumps(status.to_dict(), indent=2) if as_json else format_status(status))
    return EXIT_OK if status.initialised else EXIT_RUNTIME


def set_aside(data_dir: Path) -> Path:
    """Back up an existing world and its event log, then clear the way for a new one."""
    db = data_dir / "world.db"
    stamp = utc_stamp()
    saved = backup_to(db, data_dir / "backups" / f"world.replaced.{stamp}.db")
    for suffix in ("", "-wal", "-shm"):
        (data_dir / f"world.db{suffix}").unlink(missing_ok=True)
    events = data_dir / "events.jsonl"
    if events.exists():
        events.replace(data_dir / "backups" / f"events.replaced.{stamp}.jsonl")
    return saved


async def init_world(
    env: RuntimeEnv, config: HearthConfig, seed: int | None, force: bool
) -> int:
    if Storage.world_exists(env.data_dir):
        if not force:
            raise CliError(
                f"a world already exists in {env.data_dir}; use --init --force to replace it "
                "(the old one is backed up first)"
            )
        saved = set_aside(env.data_dir)
        print(f"The previous world was saved to {saved}")
    async with Storage(env.data_dir, synchronous=config.settings.storage.synchronous) as storage:
        try:
            world = await create_world(storage, config, seed)
        except WorldSetupError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    env.agents_dir.mkdir(parents=True, exist_ok=True)
    state = world.state
    print(
        f"Created a {state.width}x{state.height} world (seed {state.seed}) in {env.data_dir} "
        f"with {len(world.agents)} agents: " + ", ".join(a.name for a in world.agents)
    )
    return EXIT_OK


async def open_world(env: RuntimeEnv, config: HearthConfig) -> int:
    """The main job: make sure a world exists, then show it."""
    if not Storage.world_exists(env.data_dir):
        print("No world yet: creating one.")
        await init_world(env, config, seed=None, force=False)
    else:
        # Opening for writing applies pending migrations (after a backup).
        async with Storage(env.data_dir, create=False) as storage:
            if storage.db.migrated_from is not None:
                print(
                    f"Migrated {storage.db_path} from schema v{storage.db.migrated_from}; "
                    f"the previous file is saved at {storage.db.backup_path}"
                )
    return await show_status(env, as_json=False)


async def run(args: argparse.Namespace) -> int:
    config = load_config(args.config_dir)
    env = RuntimeEnv.resolve(os.environ, PROJECT_DIR, args.data_dir, args.agents_dir)
    log.debug("data dir %s, agents dir %s", env.data_dir, env.agents_dir)
    if args.status:
        return await show_status(env, args.json)
    if args.init:
        return await init_world(env, config, args.seed, args.force)
    return await open_world(env, config)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.debug)
    try:
        return asyncio.run(run(args))
    except ConfigError as exc:
        print(f"hearth: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (StorageError, CliError) as exc:
        print(f"hearth: {exc}", file=sys.stderr)
        return getattr(exc, "code", EXIT_RUNTIME)
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"hearth: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        print("hearth: interrupted", file=sys.stderr)
        return 130


def cli() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
