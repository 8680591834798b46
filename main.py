"""Hearth's command line: wires config, storage and services together.

    hearth                 open the world (creating it on first run) and show it
    hearth --init          create a new world (--seed N, --size WxH, --agents N, --force)
    hearth --status        summarise the world (--json for machines)
    hearth --check         list every damaged row of the world, changing nothing
    hearth --map [PATH]    draw the world: in the terminal, or as a PNG image at PATH
    hearth --run N         live N ticks (creating the world first if needed); --quiet, --json

Exit codes: 0 success, 1 a runtime problem (no world, unreadable database),
2 a usage or configuration mistake, 130 a run stopped by Ctrl+C. A user's mistake
never shows a traceback.
"""

from __future__ import annotations

import os

# Before numpy loads: Hearth's matrices are small, and BLAS threads spinning
# against the engine's own threads made world generation 3x slower under load.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import json
import logging
import re
import shutil
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from adapters.capacity import Capacities, Capacity
from adapters.mind_choice import (
    CLAUDE,
    LOCAL,
    MIND_CHOICES,
    REPLAY,
    MindChoiceError,
    mind_kinds,
)
from adapters.offline_mind import OfflineMind
from config import ConfigError, HearthConfig, RuntimeEnv, load_config
from core.agent import Agent
from core.clock import day_of, first_tick_of_day
from core.spend import Price
from core.text import clean_text
from engine import HearthEngine
from generation import estimate_memory
from logging_config import setup_logging
from observe.console import RunSummary, tick_json, tick_lines
from observe.progress import creation_progress
from observe.worldmap import render_terminal_map, supports_color, write_png
from services.budget import Budgets, SpendMeter, UnpricedModel, requests_in_record
from services.mind import Mind
from services.status import AgentSummary, WorldStatus, world_status
from services.world_setup import NewWorld, WorldSetupError, plan_world, status_text, write_world
from services.world_view import world_picture
from storage import Storage, StorageError, WorldBusyError, WorldLock
from storage.homes import AgentHomes
from storage.world_check import check_world
from storage.world_files import (
    agent_names,
    identity,
    install,
    new_staging,
    recover,
    set_aside,
)

if TYPE_CHECKING:
    from adapters.claude_mind import ClaudeMind
    from adapters.claude_setup import ClaudeParts
    from adapters.openai_mind import OpenAIMind

log = logging.getLogger("hearth")

PROJECT_DIR = Path(__file__).resolve().parent
EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
"""What stops a run cleanly: Ctrl+C, a polite kill, and a closed terminal (SIGHUP)."""
MIN_SIDE = 10
"""The smallest world side: room for a lake, a wood and a few agents."""
GARDENER_NICENESS = 10
"""How far the Gardener's process steps back for the scheduler (os.nice): on a busy
machine the engine's ticks get the processors first."""


class CliError(Exception):
    """A problem to report on one line, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.code = code


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (the full usage is in --help)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


VALUE_FLAGS = ("--size", "--agents", "--seed")


def _glue_values(argv: Sequence[str]) -> list[str]:
    """`--size -5x10` -> `--size=-5x10`: argparse would take `-5x10` for a flag and
    report a missing value instead of the real mistake."""
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in VALUE_FLAGS and i + 1 < len(tokens) and tokens[i + 1].startswith("-") \
                and not tokens[i + 1].startswith("--"):
            out.append(f"{token}={tokens[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="hearth",
        description="Hearth: a grid world where language-model agents live. "
        "With no command, opens the world (creating it on first run) and shows it.",
    )
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="where world.db, events and traces live (default: "
                             f"$HEARTH_DATA_DIR, else {PROJECT_DIR / 'data'})")
    parser.add_argument("--agents-dir", type=Path, metavar="DIR",
                        help="agents' home folders (default: $HEARTH_AGENTS_DIR, "
                             f"else {PROJECT_DIR / 'agents'})")
    parser.add_argument("--config-dir", type=Path, metavar="DIR",
                        help="folder with settings.yaml, agents.yaml, recipes.yaml, "
                             "terrain.yaml, landmarks.yaml (default: the shipped config)")
    parser.add_argument("--debug", action="store_true", help="verbose logging to stderr")
    command = parser.add_mutually_exclusive_group()
    command.add_argument("--status", action="store_true", help="summarise the world and exit")
    command.add_argument("--init", action="store_true", help="create a new world and exit")
    command.add_argument("--check", action="store_true",
                         help="list every damaged row of the world, changing nothing "
                              "(exit 1 if there is any)")
    command.add_argument("--run", type=_whole_number(minimum=1), metavar="N",
                         help="run N ticks, printing each action; Ctrl+C stops cleanly")
    command.add_argument("--watch", action="store_true",
                         help="open the live observer on the world without creating one "
                              "(plain `hearth` creates a world first if there is none)")
    command.add_argument("--gardener", action="store_true",
                         help="run the Gardener beside the world: it watches the world's "
                              "health and asks the engine for gentle changes to the world "
                              "(never to an agent); Ctrl+C stops it")
    command.add_argument("--fork", type=_whole_number(minimum=0), metavar="T",
                         help="with --into DIR: make DIR/data and DIR/agents, the world "
                              "exactly as it stood at tick T (the parent is only read)")
    command.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"),
                         help="say, per agent, from which tick two worlds (forks) differ "
                              "and how; --json for machines")
    command.add_argument("--map", nargs="?", const="", default=None, metavar="PATH",
                         help="draw the whole world in the terminal, or write it to PATH "
                              "(a .png image, one pixel per cell)")
    parser.add_argument("--json", action="store_true",
                        help="with --status or --run: machine-readable "
                             "(--run: one JSON object per tick)")
    parser.add_argument("--quiet", action="store_true",
                        help="with --run: print only the summary")
    parser.add_argument("--once", action="store_true",
                        help="with --gardener: run one cycle now and exit")
    parser.add_argument("--mind", choices=MIND_CHOICES,
                        help="with --run or the observer: who speaks for every agent "
                             "(default: each agent's "
                             "`mind` in agents.yaml, else auto: Claude when "
                             "ANTHROPIC_API_KEY is set, the offline mind otherwise)")
    parser.add_argument("--seed", type=_whole_number(minimum=0), metavar="N",
                        help="with --init: the world seed (default: settings or random)")
    parser.add_argument("--size", type=_size, metavar="WxH",
                        help="with --init: world size in cells, like 500x500 "
                             "(default: settings.yaml)")
    parser.add_argument("--agents", type=_whole_number(minimum=1), metavar="N",
                        help="with --init: how many agents (default: those in agents.yaml; "
                             "more get generated names and personalities)")
    parser.add_argument("--into", type=Path, metavar="DIR",
                        help="with --fork: a new or empty folder for the fork")
    parser.add_argument("--force", action="store_true",
                        help="with --init: replace an existing world (it is backed up first)")
    return parser


def _whole_number(minimum: int):
    def parse(raw: str) -> int:
        try:
            value = int(raw, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {raw!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_SIZE_RE = re.compile(r"^\s*(-?\d+)\s*[xX]\s*(-?\d+)\s*$")


def _size(raw: str) -> tuple[int, int]:
    match = _SIZE_RE.fullmatch(raw)
    if not match:
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT in cells, like 500x500, not {raw!r}"
        )
    width, height = int(match.group(1)), int(match.group(2))
    if width < MIN_SIDE or height < MIN_SIDE:
        raise argparse.ArgumentTypeError(
            f"{width}x{height} is too small: each side needs at least {MIN_SIDE} cells"
        )
    return width, height


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(_glue_values(sys.argv[1:] if argv is None else argv))
    if (args.fork is None) != (args.into is None):
        parser.error("--fork T and --into DIR go together")
    if args.json and not (args.status or args.run or args.compare):
        parser.error("--json goes with --status, --run or --compare")
    if args.quiet and not args.run:
        parser.error("--quiet goes with --run")
    if args.once and not args.gardener:
        parser.error("--once goes with --gardener")
    if args.mind is not None and (args.status or args.init or args.map is not None
                                  or args.gardener):
        parser.error("--mind goes with --run, --watch or plain hearth")
    init_only = [flag for flag, used in (("--seed", args.seed is not None),
                                          ("--size", args.size is not None),
                                          ("--agents", args.agents is not None),
                                          ("--force", args.force)) if used]
    if init_only and not args.init:
        parser.error(f"{', '.join(init_only)} go{'es' if len(init_only) == 1 else ''} with --init")
    return args


# --- commands -----------------------------------------------------------------------


def format_status(status: WorldStatus) -> str:
    if not status.initialised:
        return f"{status.db_path}: the database exists but holds no world yet (run hearth --init)"
    lines = [
        f"Hearth world  {status.db_path}",
        f"  size {status.width}x{status.height}   seed {status.seed}   tick {status.tick}"
        f"   {status.time_of_day}   weather {status.weather}",
        f"  schema v{status.schema_version}   {status.db_bytes / 1024:.0f} KiB   "
        + "   ".join(f"{k.replace('_', ' ')} {v}" for k, v in status.counts.items()),
        "  terrain: "
        + "  ".join(f"{kind} {share:.1%}" for kind, share in status.terrain_shares.items()),
        f"  landmarks ({len(status.landmarks)}):",
    ]
    for m in status.landmarks:
        lines.append(f"    {m.name:<24} ({m.x}, {m.y})  {m.kind}")
    lines.append(f"  agents ({len(status.agents)}):")
    for a in status.agents:
        lines.append(f"    {a.name:<12} {f'({a.x}, {a.y})':<12} {a.state:<10} {_mind_words(a)}")
    times = status.tick_times
    if times is not None:
        lines.append(f"  tick time over the last {times.ticks} tick(s) (to tick "
                     f"{times.last_tick}): mean {times.mean_ms:.1f} ms, max {times.max_ms:.1f} ms")
        lines.append("    " + "   ".join(f"{name} {ms:.2f}" for name, ms in
                                         times.phases_ms.items()) + "  (ms per phase)")
    if status.unfinished_tick is not None:
        if status.unfinished_turns:
            lines.append(f"  tick {status.unfinished_tick} was interrupted after "
                         f"{status.unfinished_turns} turn(s); the next run finishes it")
        else:
            lines.append(f"  tick {status.unfinished_tick} was begun and none of its turns "
                         "has run yet; the next run goes on with it")
    if status.spend:
        lines.append(f"  language-model spend so far: ${status.spend_usd:.4f}")
        for a in status.spend:
            unpriced = (f"  ({a.unpriced_requests} through a model with no price)"
                        if a.unpriced_requests else "")
            lines.append(
                f"    {a.name:<12} ${a.usd:.4f}  {a.requests} requests  tokens: "
                f"{a.input_tokens:,} in, {a.output_tokens:,} out, {a.cache_write_tokens:,} "
                f"cache write, {a.cache_read_tokens:,} cache read{unpriced}")
    if status.gardener:
        lines.append("  the Gardener's latest requests (newest first):")
        for g in status.gardener:
            when = f"tick {g.tick}" if g.tick is not None else "waiting"
            lines.append(f"    cycle {g.cycle} ({g.level or '?'}) {g.kind:<15} {g.status:<8} "
                         f"{when:<10} {_cut(_request_words(g.said), 100)}")
    return "\n".join(lines)


def _mind_words(agent: AgentSummary) -> str:
    """Which mind took the agent's last turn: a model id names a model only when one
    spoke for it (an offline run never asked one)."""
    if agent.mind is None:
        return f"no turn yet (configured: {agent.model_id})"
    if agent.mind == "offline":
        return "offline mind"
    if agent.mind == "claude":
        return f"Claude, {agent.model_id}"
    return f"{agent.mind} model, {agent.model_id}"


def _request_words(said: str) -> str:
    """A Gardener request's parameters (stored as JSON) as `key value` pairs; a reason
    (plain words) as it is."""
    try:
        params = json.loads(said)
    except ValueError:
        return clean_text(said)
    if not isinstance(params, dict):
        return clean_text(said)
    return clean_text(", ".join(f"{k} {v if isinstance(v, str) else json.dumps(v)}"
                                for k, v in params.items()))


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at a word with an ellipsis."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    return (head[:space] if space > width // 2 else head).rstrip(" ,;") + "…"


async def show_status(env: RuntimeEnv, config: HearthConfig, as_json: bool) -> int:
    if not Storage.world_exists(env.data_dir):
        message = (
            f"No world in {env.data_dir} yet. Create one with `{env.command('--init')}` "
            f"(or just `{env.command()}`)."
        )
        if as_json:
            print(json.dumps({"error": "no_world", "message": message}))
        else:
            print(message)
        return EXIT_RUNTIME
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        if damage := await first_problem(storage, env):
            if as_json:
                print(json.dumps({"error": "damaged", "message": damage}))
                return EXIT_RUNTIME
            raise CliError(damage)
        status = await world_status(storage, config.settings.time, _prices(config))
    print(json.dumps(status.to_dict(), indent=2) if as_json else format_status(status))
    return EXIT_OK if status.initialised else EXIT_RUNTIME


async def first_problem(storage: Storage, env: RuntimeEnv | None = None) -> str | None:
    """The world's first damaged row in one line, or None when every row is sound."""
    problems = await check_world(storage.db)
    if not problems:
        return None
    more = f"; {len(problems) - 1} more" if len(problems) > 1 else ""
    check = env.command("--check") if env is not None else "hearth --check"
    return f"{storage.db_path} is damaged: {problems[0]} ({check} lists them all{more})"


async def check_world_rows(env: RuntimeEnv) -> int:
    """`--check`: every problem of the world's rows, one a line; nothing is changed."""
    if not Storage.world_exists(env.data_dir):
        raise CliError(f"no world in {env.data_dir} yet; create one with "
                       f"`{env.command('--init')}`")
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        problems = await check_world(storage.db)
    for line in problems:
        print(line)
    print(f"{storage.db_path}: {len(problems)} problem(s)" if problems
          else f"{storage.db_path}: no problems found")
    return EXIT_RUNTIME if problems else EXIT_OK


def _available_memory() -> int | None:
    """Bytes of memory the system could give us now, or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits_in_memory(width: int, height: int) -> None:
    needed = estimate_memory(width, height)
    available = _available_memory()
    # Leave a fifth for everything else: a machine swapping is not "able to hold" it.
    if available is not None and needed > available * 0.8:
        raise CliError(
            f"a {width}x{height} world needs about {needed / 2**30:.1f} GiB of memory to "
            f"generate and this machine has {available / 2**30:.1f} GiB free; "
            "choose a smaller --size",
            EXIT_USAGE,
        )


async def init_world(
    env: RuntimeEnv,
    config: HearthConfig,
    *,
    seed: int | None = None,
    size: tuple[int, int] | None = None,
    agents: int | None = None,
    force: bool = False,
) -> int:
    exists = Storage.world_exists(env.data_dir)
    if exists and not force:
        with contextlib.suppress(WorldBusyError), WorldLock(env.data_dir):
            recover(env.data_dir)  # what a killed --init left beside the world it made
        raise CliError(
            f"a world already exists in {env.data_dir}; use --init --force to replace it "
            "(the old one is backed up first)",
            EXIT_USAGE,
        )
    if exists:  # refuse at once, not after making the new world, if the world is in use
        with WorldLock(env.data_dir):
            pass
    width, height = size or (config.settings.world.width, config.settings.world.height)
    check_fits_in_memory(width, height)
    with creation_progress(sys.stderr, enabled=sys.stderr.isatty()) as progress:
        try:
            world = plan_world(
                config, seed=seed, size=(width, height), agent_count=agents, progress=progress
            )
        except WorldSetupError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    homes = AgentHomes(env.agents_dir)
    # A home that is a link or no folder is refused before anything is made or moved. With
    # --force a folder (or a link to one) at a new agent's home goes with the old world,
    # the link moved, not followed (set_aside below); anything else would stay in the way.
    homes.check(*(agent.name for agent in world.agents
                  if not (exists and homes.exists(agent.name))))
    with WorldLock(env.data_dir):  # refused while another process changes this world
        for line in recover(env.data_dir):
            print(line, file=sys.stderr)
        if Storage.world_exists(env.data_dir) != exists:
            raise CliError(f"{env.data_dir}: the world changed while this one was being "
                           "made; nothing was written", EXIT_RUNTIME)
        # Built aside and moved in whole (storage/world_files.py): a killed --init leaves
        # no half world, and the old world stays whole until the new one is ready.
        staging = new_staging(env.data_dir)
        async with Storage(staging,
                           synchronous=config.settings.storage.synchronous) as storage:
            await write_world(storage, world, config)
        if exists:  # the old world's homes go with it, and any a new agent would reuse
            names = set(agent_names(env.data_dir / "world.db")) | {a.name for a in world.agents}
            saved = set_aside(env.data_dir, [homes.path(n) for n in sorted(names)
                                             if homes.exists(n)])
            print(f"The previous world was saved to {saved}")
        db_path = install(staging, env.data_dir)
        for agent in world.agents:
            homes.create(agent.name, status_text(agent, world.state, config))
    print(describe_new_world(world, db_path, homes, env))
    return EXIT_OK


def describe_new_world(world: NewWorld, db_path: Path, homes: AgentHomes,
                       env: RuntimeEnv | None = None) -> str:
    state = world.state
    shares = world.terrain.shares()
    total = sum(world.seconds.values())
    again = env.command if env is not None else (lambda *words: " ".join(("hearth", *words)))
    lines = [
        f"Created a {state.width}x{state.height} world (seed {state.seed}) "
        f"in {total:.2f} s.",
        "  terrain   " + "  ".join(f"{t.value} {v:.0%}" for t, v in shares.items()),
        f"  landmarks {len(world.landmarks)}: " + ", ".join(m.name for m in world.landmarks),
        f"  agents    {len(world.agents)}: "
        + ", ".join(f"{a.name} ({a.position.x}, {a.position.y})" for a in world.agents),
    ]
    if world.generated_agents:
        lines.append(f"            generated: {', '.join(world.generated_agents)}")
    lines += [
        f"  database  {db_path}",
        f"  homes     {homes.root}/<name>/ (journal.md, notes.md, discoveries.md, .status)",
        f"Next: `{again('--status')}` for a summary, `{again('--map')}` to see it, "
        f"`{again('--map', 'world.png')}` for an image.",
    ]
    return "\n".join(lines)


async def draw_map(env: RuntimeEnv, target: str) -> int:
    path = Path(target) if target else None
    if path is not None and path.suffix.lower() != ".png":
        suffix = path.suffix or "no suffix"
        raise CliError(f"--map writes PNG images: give a path ending in .png ({suffix} given)",
                       EXIT_USAGE)
    if not Storage.world_exists(env.data_dir):
        raise CliError(f"no world in {env.data_dir} yet; create one with "
                       f"`{env.command('--init')}`")
    async with Storage(env.data_dir, create=False, read_only=True) as storage:
        if damage := await first_problem(storage, env):
            raise CliError(damage)
        picture = await world_picture(storage)
    if picture is None:
        raise CliError(f"{env.data_dir}: the database holds no world yet (run "
                       f"`{env.command('--init')}`)")
    if path is not None:
        write_png(path, picture.codes, agents=picture.agents, landmarks=picture.landmarks)
        height, width = picture.codes.shape
        print(f"Wrote {path} ({width}x{height} pixels, one per cell; "
              f"{len(picture.agents)} agents and {len(picture.landmarks)} landmarks marked)")
        return EXIT_OK
    columns, rows = shutil.get_terminal_size((100, 40))
    color = supports_color(sys.stdout, os.environ)
    try:
        text = render_terminal_map(picture.codes, max_columns=columns, max_rows=max(rows - 1, 4),
                                   color=color, agents=picture.agents,
                                   landmarks=picture.landmarks)
    except ValueError as exc:
        raise CliError(f"cannot draw the map here: {exc}", EXIT_USAGE) from None
    print(text)
    return EXIT_OK


@dataclass(frozen=True)
class Watch:
    """A request to open the live observer once the command's own loop is done (the
    TUI runs its own event loop, so it cannot start inside `asyncio.run`)."""

    env: RuntimeEnv
    config: HearthConfig
    mind: str | None


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


async def open_world(
    env: RuntimeEnv, config: HearthConfig, mind: str | None = None, *, create: bool = True,
) -> int | Watch:
    """The main job: make sure a world exists, then watch it live in the terminal UI.

    Not at a terminal (a pipe, CI), the world's status and map are printed instead.
    With `create=False` (--watch) a missing world is not made: the UI says how to."""
    _choose_minds([], config, mind, env)  # refuses Claude without a key, before anything
    exists = Storage.world_exists(env.data_dir)
    if not exists and create:
        await _check_claude_before_a_world(config, env, mind)
        print("No world yet: creating one.")
        await init_world(env, config)
    elif exists:
        # Opening for writing applies pending migrations (after a backup); a world another
        # process is changing was opened, and so migrated, by it: this one only watches.
        with contextlib.suppress(WorldBusyError):
            async with Storage(env.data_dir, create=False) as storage:
                if storage.db.migrated_from is not None:
                    print(
                        f"Migrated {storage.db_path} from schema v{storage.db.migrated_from}; "
                        f"the previous file is saved at {storage.db.backup_path}"
                    )
    if interactive():
        return Watch(env, config, mind)
    if not exists and not create:
        raise CliError(f"no world in {env.data_dir} yet: create one with "
                       f"`{env.command('--init')}`")
    code = await show_status(env, config, as_json=False)
    if code == EXIT_OK:
        print()
        code = await draw_map(env, "")
        print(f"\n(Run `{env.command()}` in a terminal to watch the world live.)")
    return code


def watch(request: Watch) -> int:
    """Open the live observer: the engine in its own thread, the UI on this one."""
    from observe.tui import observe_world  # Textual loads only when someone watches

    env, config = request.env, request.config
    if not Storage.world_exists(env.data_dir):
        return observe_world(None, str(env.data_dir))
    budget: list[str] = []
    meters: list[SpendMeter] = []
    engines: list[HearthEngine] = []

    async def make_engine() -> HearthEngine:
        storage = Storage(env.data_dir, create=False,
                          synchronous=config.settings.storage.synchronous)
        await storage.open()
        try:
            wired = await wire_engine(env, config, storage, request.mind, budget.append)
            await wired.engine.initialize()
        except BaseException:
            await storage.close()
            raise
        wired.engine.on_close.insert(0, storage.close)  # closed last, after the clients
        meters.append(wired.meter)
        engines.append(wired.engine)
        return wired.engine

    def spend() -> tuple[float, dict[str, float]]:
        return (meters[0].run, dict(meters[0].by_agent)) if meters else (0.0, {})

    from engine import EngineRunner
    from observe.api import ObserverAPI
    from storage.history import HistoryReader
    from storage.world_lock import WorldBusyError

    runner = EngineRunner(make_engine)
    print("Opening the world...", file=sys.stderr)
    try:
        history = HistoryReader(env.data_dir / "world.db")
    except StorageError as exc:
        raise CliError(str(exc)) from None
    api = ObserverAPI(runner, history=history, spend=spend)
    try:
        try:
            api.start()
        except RuntimeError:
            cause = runner.error
            if isinstance(cause, WorldBusyError):  # another process changes it: watch only
                from observe.watching import WatchingAPI

                api = WatchingAPI(env.data_dir, config, history=history)
                api.start()
            elif isinstance(cause, (CliError, StorageError, ConfigError)):
                raise cause from None
            else:
                raise CliError(f"the world could not be opened: {cause}") from None
        from services.simulation import clock_of

        code = observe_world(api, str(env.data_dir), clock_of(config))
    finally:
        api.stop()
        history.close()
    if engines and engines[0].halted is not None:
        print(f"Stopped: {engines[0].halted}", file=sys.stderr)
        return EXIT_RUNTIME
    if budget:
        print(f"Paused: {budget[0]}. Raise the budget in settings.yaml (claude.budgets) "
              "to go on.", file=sys.stderr)
    return code


async def run_world(
    env: RuntimeEnv, config: HearthConfig, count: int, *, quiet: bool, as_json: bool,
    mind: str | None = None,
) -> int:
    """`_run_world`, with a disk that fails it (full, failing, read-only) said in one line
    naming where; what was committed stays, and the next run goes on from it."""
    from storage.errors import is_storage_fault, storage_fault_line

    try:
        return await _run_world(env, config, count, quiet=quiet, as_json=as_json, mind=mind)
    except OSError as exc:
        if is_storage_fault(exc):
            raise StorageError(storage_fault_line(exc)) from None
        raise


async def _run_world(
    env: RuntimeEnv, config: HearthConfig, count: int, *, quiet: bool, as_json: bool,
    mind: str | None = None,
) -> int:
    """Live `count` ticks; Ctrl+C finishes the turn in flight and stops.

    Each agent's mind is Claude or the offline one (`adapters/mind_choice.py`); a
    choice that cannot be honoured (Claude with no key) is refused before anything
    runs, not even a new world."""
    notes = sys.stderr if as_json else sys.stdout
    _choose_minds([], config, mind, env)  # refuses Claude without a key, before anything
    if not Storage.world_exists(env.data_dir):
        await _check_claude_before_a_world(config, env, mind)
        print("No world yet: creating one.", file=notes)
        with contextlib.redirect_stdout(notes):
            await init_world(env, config)
    synchronous = config.settings.storage.synchronous
    async with Storage(env.data_dir, create=False, synchronous=synchronous) as storage:
        budget: list[str] = []  # which budget stopped the run, in words
        wired = await wire_engine(env, config, storage, mind, budget.append)
        engine, meter, claude = wired.engine, wired.meter, wired.claude
        await engine.initialize()
        engine.write_behind_on()  # close() waits for the last tick's write
        if engine.recreated_homes:
            print(f"Made again the missing home(s) of {', '.join(engine.recreated_homes)} "
                  f"in {env.agents_dir}.", file=notes)
        progress = await storage.engine.get_progress()
        if progress is not None and progress.tick == engine.tick:
            done = len(await storage.engine.turns_done(engine.tick))
            print(f"Resuming tick {engine.tick}, interrupted after {done} turn(s)." if done else
                  f"Going on with tick {engine.tick}, begun when the last run stopped.",
                  file=notes)
        loop = asyncio.get_running_loop()
        this = asyncio.current_task()
        asked: list[int] = []

        def stop(sig: int) -> None:
            """Ctrl+C: finish the turns in flight and stop; again: stop now."""
            asked.append(sig)
            if len(asked) == 1:
                print("Stopping after the turns in flight (Ctrl+C again to stop now)...",
                      file=sys.stderr, flush=True)
                engine.request_stop()
            elif this is not None:
                this.cancel()

        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop, sig)
        summary = RunSummary()
        try:
            for _ in range(count):
                if engine.stop_requested:  # asked between ticks: no new tick is begun
                    break
                started = time.perf_counter()
                ctx = await engine.tick_once()
                summary.add(ctx, (time.perf_counter() - started) * 1000)
                if as_json:
                    print(json.dumps(tick_json(ctx), ensure_ascii=False), flush=True)
                elif not quiet:
                    for line in tick_lines(ctx):
                        print(line)
                    sys.stdout.flush()
                if engine.stop_requested:
                    break
        except asyncio.CancelledError:
            if len(asked) < 2:
                raise
            cut_short = True
        else:
            cut_short = False
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            await engine.close()  # waits for a snapshot still being written; closes clients
        if cut_short:
            print(f"Stopped at once at tick {engine.tick}: what was committed is saved; the "
                  "turns in flight were dropped and are taken again next run.", file=notes)
            return EXIT_INTERRUPTED
        for line in summary.lines():
            print(line, file=notes)
        if claude is not None:
            used = meter.usage
            print(f"language-model spend this run: ${meter.run:.4f} "
                  f"({used.input:,} tokens in, {used.output:,} out, "
                  f"{used.cache_write + used.cache_write_1h:,} written to cache, "
                  f"{used.cache_read:,} read from it)", file=notes)
        if engine.halted is not None:
            print(f"Stopped at tick {engine.tick}: {engine.halted}. Everything done so far is "
                  "saved; the agents who had not acted act when the run goes on.", file=notes)
            return EXIT_RUNTIME
        if budget:
            print(f"Stopped at tick {engine.tick}: {budget[0]}. Everything done so far is "
                  "saved; raise the budget in settings.yaml (claude.budgets) to go on.",
                  file=notes)
            return EXIT_BUDGET
        if engine.stop_requested:
            print(f"Stopped at tick {engine.tick}; everything done so far is saved.", file=notes)
            return EXIT_INTERRUPTED
    return EXIT_OK


@dataclass
class WiredEngine:
    engine: HearthEngine
    meter: SpendMeter
    claude: ClaudeMind | None


async def wire_engine(
    env: RuntimeEnv, config: HearthConfig, storage: Storage, mind: str | None,
    on_budget: Callable[[str], object],
) -> WiredEngine:
    """The engine over an open world, each agent with the mind chosen for it, the spend
    meter and the model clients; `engine.close()` closes the clients. A budget reached
    stops the engine after the turn in flight and is reported to `on_budget`.
    A world with a damaged row is refused first, in one line, before anything is read
    into the engine or written (storage/world_check.py)."""
    if damage := await first_problem(storage, env):
        raise CliError(damage)
    state = await storage.world.get_world_state()
    if state is None:
        raise CliError(f"{storage.db_path} holds no world yet (run "
                       f"`{env.command('--init')}`)")
    stored = await storage.agents.get_all_agents()
    residents = _as_agents_yaml_says(stored, config)
    kinds = _choose_minds([a.name for a in residents], config, mind, env)
    offline = OfflineMind(state.seed, {a.name: a.personality for a in residents})
    speakers = [a for a in residents if kinds[a.name] == CLAUDE]
    meter = await _spend_meter(speakers, config, storage, state.tick)
    engine: HearthEngine | None = None

    def reached(what: str) -> None:
        on_budget(what)
        if engine is not None:
            engine.request_stop()

    scheduling = config.settings.scheduling
    capacities = Capacities(start=scheduling.model_requests_start,
                            ceiling=scheduling.model_requests_max)
    parts = await _claude_parts(speakers, config, env, storage, meter, reached, capacities)
    await _check_prices(meter, speakers, config, parts)
    claude = parts.mind if parts is not None else None
    narrator = parts.narrator if parts is not None else None
    local = _local_minds([a for a in residents if kinds[a.name] == LOCAL], config, storage,
                         capacities)
    await _record_model_changes(storage, stored, residents)  # only once every check passed
    minds: dict[str, Mind] = dict(local)
    replayed = None
    if REPLAY in kinds.values():  # --mind replay: decisions from the stored turns
        from engine.replay import replay_parts
        replayed = await replay_parts(storage, env.data_dir,
                                      [n for n, kind in kinds.items() if kind == REPLAY])
        minds.update(replayed.minds)
        narrator = narrator or replayed.narrator
    if claude is not None:
        minds.update({n: claude for n, kind in kinds.items() if kind == CLAUDE})
    engine = HearthEngine(
        storage, config, mind=offline, agents_dir=env.agents_dir, minds=minds,
        narrator=narrator, scene_narrator=narrator,
    )
    if claude is not None:  # once stopping, no turn asks again and nothing is retold
        claude.stopping = lambda: engine.stop_requested
    if narrator is not None:
        narrator.stopping = lambda: engine.stop_requested
    for each in {id(m): m for m in local.values()}.values():
        each.stopping = lambda: engine.stop_requested
    clients = {id(c): c for m in local.values() for c in m.shards.clients}
    for client in parts.clients if parts is not None else ():
        clients[id(client)] = client
    engine.on_close += [client.close for client in clients.values()]
    if replayed is not None:
        engine.on_close.append(replayed.close)
    return WiredEngine(engine, meter, claude)


def _prices(config: HearthConfig) -> dict[str, Price]:
    return config.settings.claude.price_table()


async def _check_claude_before_a_world(config: HearthConfig, env: RuntimeEnv,
                                       mind: str | None) -> None:
    """Before a world is made for a run Claude will speak in: a key the API refuses, or a
    model it no longer serves, stops the program now rather than after the making.
    (Warnings wait for the run's own check, so each is said once.)"""
    configured = [a.name for a in config.agents.agents]
    kinds = _choose_minds(configured, config, mind, env)
    models = {a.model_id: [a.name] for a in config.agents.agents if kinds[a.name] == CLAUDE}
    if not models or env.api_key is None:
        return
    narrator = config.settings.claude.narrator_model
    if narrator:
        models.setdefault(narrator, ["the narrator"])
    from adapters.claude_models import KeyRefused, ModelRefused, check_models
    from adapters.claude_setup import new_client

    client = new_client(env.api_key, config.settings.claude.timeout_seconds)
    try:
        await check_models(client, models, datetime.date.today())
    except KeyRefused as exc:
        raise CliError(str(exc), EXIT_RUNTIME) from None
    except ModelRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    finally:
        await client.close()


def _as_agents_yaml_says(residents: list[Agent], config: HearthConfig) -> list[Agent]:
    """The world's agents, each speaking through the model agents.yaml now names for it
    (agents it does not list, generated ones, follow its first agent, as when they were
    made): a model that retired is replaced by editing agents.yaml."""
    configured = {a.name: a.model_id for a in config.agents.agents}
    first = config.agents.agents[0].model_id if config.agents.agents else None
    out = []
    for agent in residents:
        model = configured.get(agent.name, first)
        out.append(agent if model in (None, agent.model_id)
                   else dataclasses.replace(agent, model_id=model))
    return out


async def _record_model_changes(storage: Storage, before: list[Agent],
                                after: list[Agent]) -> None:
    """The world remembers which model now speaks for whom, and the user is told."""
    was = {a.name: a.model_id for a in before}
    moved = [(a.name, a.model_id) for a in after if was.get(a.name) != a.model_id]
    await storage.agents.set_models(moved)
    for name, model in moved:
        print(f"{name} now speaks through {model} (was {was[name]}), as "
              "config/agents.yaml says.", file=sys.stderr)


def _choose_minds(
    names: list[str], config: HearthConfig, flag: str | None, env: RuntimeEnv
) -> dict[str, str]:
    configured = {a.name: a.mind for a in config.agents.agents}
    try:
        return mind_kinds(names, configured, flag, env.api_key is not None)
    except MindChoiceError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


async def _spend_meter(
    residents: list[Agent], config: HearthConfig, storage: Storage, tick: int
) -> SpendMeter:
    """This run's meter: the price table, the budgets, and what today already cost."""
    ticks_per_day = config.settings.time.ticks_per_day
    start_hour = config.settings.time.start_hour
    budgets = config.settings.claude.budgets
    day_start = first_tick_of_day(day_of(tick, ticks_per_day, start_hour), ticks_per_day,
                                  start_hour)
    earlier = []
    for at, agent, record in await storage.engine.records_of_mind("claude", day_start):
        earlier += [(agent, at, model, usage) for model, usage in requests_in_record(record)]
    meter = SpendMeter(
        _prices(config),
        Budgets(budgets.per_run, budgets.per_agent_per_day, budgets.per_tick),
        ticks_per_day, earlier, now=tick, start_hour=start_hour)
    return meter


async def _check_prices(meter: SpendMeter, residents: list[Agent], config: HearthConfig,
                        parts: ClaudeParts | None) -> None:
    """Every model Claude speaks through has a price (after the models were found to
    exist, so a retired or misspelt id is named as such, not as unpriced)."""
    narrator = config.settings.claude.narrator_model
    from core.model_catalog import facts

    used = {a.model_id for a in config.agents.agents} | {narrator, config.settings.gardener.model}
    for model in sorted(config.settings.claude.prices):
        if facts(model) is None and model not in used:
            print(f"warning: settings.yaml prices {model}, a model Hearth does not know and "
                  "nobody here uses (a typo?)", file=sys.stderr)
    try:
        meter.check_models([a.model_id for a in residents]
                           + ([narrator] if narrator and residents else []))
    except UnpricedModel as exc:
        for client in parts.clients if parts is not None else ():
            await client.close()
        raise CliError(f"config error: {exc}", EXIT_USAGE) from None


async def _claude_parts(
    residents: list[Agent], config: HearthConfig, env: RuntimeEnv, storage: Storage,
    meter: SpendMeter, on_budget: Callable[[str], None], capacities: Capacities,
) -> ClaudeParts | None:
    """The Claude mind for every agent Claude speaks for, and the narrator (None if
    Claude speaks for nobody). The key and each model are checked first: a key the API
    refuses stops here (exit 1), a retired or unknown model too (exit 2); a deprecated
    one is named once, with its end of life.

    The SDK reads ANTHROPIC_BASE_URL itself, so any compatible endpoint can stand in."""
    if not residents or env.api_key is None:
        return None
    from adapters.claude_models import KeyRefused, ModelRefused
    from adapters.claude_setup import Speaker, claude_parts

    efforts = {a.name: a.effort for a in config.agents.agents}
    speakers = [Speaker(a.name, a.model_id, a.personality, efforts.get(a.name))
                for a in residents]
    try:
        parts = await claude_parts(
            speakers, config.settings.claude, env.api_key, today=datetime.date.today(),
            meter=meter, on_budget=on_budget, trace=storage.traces.write_now,
            capacities=capacities)
    except KeyRefused as exc:
        raise CliError(str(exc), EXIT_RUNTIME) from None
    except ModelRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    for line in parts.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return parts


def _local_minds(
    residents: list[Agent], config: HearthConfig, storage: Storage, capacities: Capacities,
) -> dict[str, OpenAIMind]:
    """A mind per OpenAI-compatible endpoint, for the agents agents.yaml gives `mind: local`.

    The key, if the endpoint wants one, is read from the environment variable the agent
    names (`api_key_env`); a variable that is not set is refused before anything runs."""
    if not residents:
        return {}
    import openai  # only when a local model speaks for someone

    from adapters.client_shards import clients_needed
    from adapters.openai_mind import OpenAIMind, OpenAIProfile

    settings = config.settings.claude
    configured = {a.name: a for a in config.agents.agents}
    groups: dict[tuple[str, str | None], list[Agent]] = {}
    for agent in residents:
        spec = configured[agent.name]
        groups.setdefault((str(spec.base_url), spec.api_key_env), []).append(agent)
    minds: dict[str, OpenAIMind] = {}
    for (url, key_env), agents in groups.items():
        key = os.environ.get(key_env, "").strip() if key_env else "not-needed"
        if not key:
            raise CliError(f"{', '.join(a.name for a in agents)} use {url} with the key in "
                           f"${key_env}, which is not set", EXIT_USAGE)
        client, *more = [openai.AsyncOpenAI(base_url=url, api_key=key,
                                            max_retries=settings.max_retries,
                                            timeout=settings.timeout_seconds)
                         for _ in range(clients_needed(len(agents)))]
        mind = OpenAIMind(client, {a.name: OpenAIProfile(a.model_id, a.personality)
                                   for a in agents}, more_clients=more,
                          max_tokens=settings.max_tokens, trace=storage.traces.write_now,
                          compact_above_chars=settings.compact_above_chars,
                          keep_recent_chars=settings.keep_recent_chars,
                          summary_max_chars=settings.summary_max_chars,
                          capacities=capacities)
        minds.update({a.name: mind for a in agents})
    return minds


def _step_back_for_the_engine() -> None:
    """Lower this process's priority: the Gardener is never urgent, and a cycle that
    waits a moment costs nothing, while a tick held up is felt by every agent."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(GARDENER_NICENESS)


async def run_gardener(env: RuntimeEnv, config: HearthConfig, *, once: bool) -> int:
    """`hearth --gardener`: cycles beside the running world until Ctrl+C (or one, with
    --once). It reads the world read-only and writes only its own cycles and requests;
    the engine applies those at its next tick."""
    import sqlite3

    from services.gardener.cycle import run_cycle
    from services.gardener.loop import Schedule, keep_gardening
    from services.gardener.observe import observe, observe_args
    from storage.gardener_db import GardenerStore
    from storage.gardener_source import SqliteHealthSource

    path = env.data_dir / "world.db"
    settings = config.settings.gardener
    with GardenerStore(path) as store:
        reader = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            source = SqliteHealthSource(reader)
            world = source.world()
            if not source.agents():
                raise CliError(f"{path}: the world has no agents, so there is no one whose "
                               "world could need tending", EXIT_USAGE)
            decider = await _gardener_model(config, env, (world.width, world.height))
            landmarks = source.landmarks()
            args = observe_args(config)

            async def cycle():  # type: ignore[no-untyped-def]
                try:
                    return await run_cycle(
                        observe(source, **args), landmarks, store,
                        thresholds=settings.thresholds.to_core(),
                        caps=settings.caps.to_core(),
                        decider=decider, memory_cycles=settings.memory_cycles)
                except (StorageError, sqlite3.OperationalError) as exc:
                    print(f"Gardener: this cycle could not run ({exc}); trying again",
                          file=sys.stderr, flush=True)
                    if once:
                        raise
                    return None

            who = "the rules" if decider is None else decider.name
            print(f"Gardener: tending {path} (decided by {who}; a cycle every "
                  f"{settings.every_ticks} ticks"
                  + (f" or {settings.every_minutes:g} minutes" if settings.every_minutes else "")
                  + ")", flush=True)
            schedule = Schedule(settings.every_ticks, settings.every_minutes,
                                settings.poll_seconds)
            if not once:  # a lasting process shares the machine with the engine
                _step_back_for_the_engine()
            tended = identity(path)

            def replaced() -> bool:  # a stat, never an open (storage/database.py)
                return identity(path) != tended

            try:
                await keep_gardening(lambda: source.world().tick, cycle, schedule, once=once,
                                     report=lambda r: print(r.summary(), flush=True),
                                     stop=replaced)
            except (KeyboardInterrupt, asyncio.CancelledError):
                print("Gardener: stopped", flush=True)
                return EXIT_INTERRUPTED
            if replaced():
                print(f"Gardener: the world in {env.data_dir} was replaced or moved; stopped. "
                      "Start it again to tend the world there now.", file=sys.stderr,
                      flush=True)
                return EXIT_RUNTIME
        finally:
            reader.close()
    return EXIT_OK


async def _gardener_model(config: HearthConfig, env: RuntimeEnv, size: tuple[int, int]):
    """The model the Gardener asks when a key is set and settings name one (else None:
    its rules decide). As for minds, a model with no price is refused, and the key and
    model are checked before the first cycle (a refused key: exit 1; a retired or
    unknown model: exit 2; a deprecated one is named once)."""
    settings = config.settings.gardener
    if env.api_key is None or not settings.model:
        return None
    from core.model_catalog import price_in

    price = price_in(config.settings.claude.price_table(), settings.model)
    if price is None:
        raise CliError(f"no price for {settings.model} in settings.yaml (claude.prices); add "
                       "one so the Gardener's spend can be counted", EXIT_USAGE)
    from adapters.claude_calls import CallPolicy
    from adapters.claude_models import KeyRefused, ModelRefused, check_models
    from adapters.claude_setup import new_client
    from adapters.gardener_model import ClaudeGardener

    client = new_client(env.api_key, settings.timeout_seconds)
    try:
        lineup = await check_models(client, {settings.model: ["the Gardener"]},
                                    datetime.date.today())
    except (KeyRefused, ModelRefused) as exc:
        await client.close()
        raise CliError(str(exc), EXIT_RUNTIME if isinstance(exc, KeyRefused)
                       else EXIT_USAGE) from None
    for line in lineup.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return ClaudeGardener(client, settings.model, price,
                          settings.caps.to_core(), size, max_tokens=settings.max_tokens,
                          budget=settings.budget_per_run,
                          options=lineup.options_for(settings.model, settings.effort,
                                                     settings.max_tokens),
                          policy=CallPolicy(1, settings.timeout_seconds, 10.0),
                          capacity=Capacity(settings.model, start=1, ceiling=1))


async def run(args: argparse.Namespace) -> int | Watch:
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
        return await show_status(env, config, args.json)
    if args.check:
        return await check_world_rows(env)
    if args.init:
        return await init_world(env, config, seed=args.seed, size=args.size,
                                agents=args.agents, force=args.force)
    if args.map is not None:
        return await draw_map(env, args.map)
    if args.fork is not None:  # issue 30: branchable history
        from engine.fork import fork_command
        return await fork_command(env, config, args.fork, args.into)
    if args.compare:
        from storage.world_compare import compare_command
        return compare_command(*args.compare, as_json=args.json)
    if args.gardener:
        return await run_gardener(env, config, once=args.once)
    if args.run:
        return await run_world(env, config, args.run, quiet=args.quiet, as_json=args.json,
                               mind=args.mind)
    return await open_world(env, config, args.mind, create=not args.watch)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.debug)
    try:
        outcome = asyncio.run(run(args))
        return watch(outcome) if isinstance(outcome, Watch) else outcome
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
        print(f"hearth: {_database_fault(exc, args)}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        print("hearth: interrupted", file=sys.stderr)
        return 130


def _database_fault(exc: sqlite3.Error, args: argparse.Namespace) -> str:
    """A database fault in words a person can act on."""
    where = Path(args.data_dir or os.environ.get("HEARTH_DATA_DIR") or PROJECT_DIR / "data")
    said = str(exc)
    if "locked" in said or "busy" in said:
        return (f"{where / 'world.db'} stayed locked by another program longer than Hearth "
                "waits (an sqlite3 shell in a transaction?); everything committed is saved "
                "and the next run goes on from it: close what holds it and run again")
    if "full" in said or getattr(exc, "sqlite_errorname", "") == "SQLITE_IOERR_SHMSIZE":
        return (f"the disk holding {where} is full; everything committed is saved and the "
                "next run goes on from it: free some space and run again")
    if ("disk I/O error" in said or "readonly" in said) and _read_only(where):
        return (f"the disk holding {where} is read-only; everything committed is saved and "
                "the next run goes on from it: make it writable and run again")
    if "disk I/O error" in said:
        return (f"the disk holding {where} failed a read or write ({said}); everything "
                "committed is saved and the next run goes on from it: check the disk and "
                "run again")
    return (f"the database in {where} failed ({said}); everything committed is saved and "
            "the next run goes on from it")


def _read_only(where: Path) -> bool:
    """Whether the file system holding `where` is mounted read-only: SQLite says only
    "disk I/O error" when a disk turns read-only under an open database."""
    try:
        return bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        return False


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
