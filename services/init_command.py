"""`hearth --init`: a new world, made whole or not at all.

Everything is planned in memory first (`plan_world`), so a refused request writes
nothing; then, holding the world's writer lock, the world is written aside, an old one
set aside whole with its agents' homes, and the new one renamed into place
(`storage/world_files.py`). The progress bar is the caller's (`observe/progress.py`):
this layer makes worlds and does not draw.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TextIO

from config import HearthConfig, RuntimeEnv
from generation import estimate_memory
from services.command_errors import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, CliError
from services.world_setup import NewWorld, WorldSetupError, plan_world, status_text, write_world
from storage import Storage, WorldBusyError, WorldLock
from storage.homes import AgentHomes
from storage.world_files import agent_names, install, new_staging, recover, set_aside

ProgressBar = Callable[[TextIO, bool], AbstractContextManager[Callable[[str, float], None] | None]]
"""How a caller draws the making (`observe.progress.creation_progress`): given a stream
and whether to draw at all, a context yielding a callback (stage, fraction) or None."""


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
    """Refuse (exit 2) a size this machine could not generate without swapping, before
    a byte of it is allocated."""
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
    bar: ProgressBar,
) -> int:
    """Make the world `--init` asks for (see the module's docstring); a request that
    cannot be honoured is refused in one line before anything is written."""
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
    with bar(sys.stderr, sys.stderr.isatty()) as progress:
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
    """What `--init` made, in a few lines, and the commands to look at it next."""
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
