"""Plain `hearth` and `hearth --watch`: the live observer on a world.

Plain `hearth` makes a world first when there is none; `--watch` never does. The TUI
runs its own event loop, so `open_world` (inside `asyncio.run`) returns a `Watch`
request and `main.py` calls `watch` once that loop is done. At no terminal (a pipe, CI)
the world's status and map are printed instead. A world another process is changing is
watched read-only (`observe/watching.py`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

from adapters.request_sizing import WORDS
from config import ConfigError, HearthConfig, RuntimeEnv
from engine.engine import HearthEngine
from engine.runner import EngineRunner
from engine.wiring import WiredEngine, check_claude_before_a_world, choose_minds, wire_engine
from observe.map_command import draw_map
from observe.progress import creation_progress
from observe.snapshot import Pace, Spending
from services.budget import SpendMeter
from services.command_errors import EXIT_OK, EXIT_RUNTIME, CliError
from services.init_command import init_world
from services.status_command import show_status
from storage import Storage, StorageError, WorldBusyError


@dataclass(frozen=True)
class Watch:
    """A request to open the live observer once the command's own loop is done (the
    TUI runs its own event loop, so it cannot start inside `asyncio.run`)."""

    env: RuntimeEnv
    config: HearthConfig
    mind: str | None
    view_only: bool = False
    """Only watch (`--view-only`, a page `--serve --public` serves): never run the world."""


def interactive() -> bool:
    """Whether a person is at a terminal, both ways, or at a page `hearth --serve` serves
    (Textual's web driver): only then is the TUI opened."""
    served = "web_driver" in os.environ.get("TEXTUAL_DRIVER", "")
    return served or (sys.stdin.isatty() and sys.stdout.isatty())


async def open_world(
    env: RuntimeEnv, config: HearthConfig, mind: str | None = None, *, create: bool = True,
    view_only: bool = False,
) -> int | Watch:
    """The main job: make sure a world exists, then watch it live in the terminal UI.

    Not at a terminal (a pipe, CI), the world's status and map are printed instead.
    With `create=False` (--watch) a missing world is not made: the UI says how to."""
    choose_minds([], config, mind, env)  # refuses Claude without a key, before anything
    exists = Storage.world_exists(env.data_dir)
    if not exists and create:
        await check_claude_before_a_world(config, env, mind)
        print("No world yet: creating one.")
        await init_world(env, config, bar=creation_progress)
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
        return Watch(env, config, mind, view_only)
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
    wireds: list[WiredEngine] = []

    async def make_engine() -> HearthEngine:
        storage = Storage(env.data_dir, create=False,
                          synchronous=config.settings.storage.synchronous)
        await storage.open()
        try:
            wired = await wire_engine(env, config, storage, request.mind, budget.append)
        except BaseException:
            await storage.close()
            raise
        wired.engine.on_close.insert(0, storage.close)  # closed last, after the clients
        meters.append(wired.meter)
        engines.append(wired.engine)
        wireds.append(wired)
        return wired.engine

    def spend() -> tuple[float, dict[str, float]]:
        """What this observer's engines spent (one each time it took the world)."""
        by_agent: dict[str, float] = {}
        for meter in meters:
            for name, usd in meter.by_agent.items():
                by_agent[name] = by_agent.get(name, 0.0) + usd
        return sum(m.run for m in meters), by_agent

    def spending() -> Spending | None:
        return spending_of(wireds[-1], sum(r.seconds_ticking for r in runners),
                           sum(r.ticks_run for r in runners)) if wireds else None

    from observe.api import ObserverAPI
    from observe.sharing import SharingAPI
    from observe.watching import WatchingAPI
    from storage.history import HistoryReader

    runners: list[EngineRunner] = []

    def engine_api() -> ObserverAPI:
        runners.append(EngineRunner(make_engine, pace=config.settings.observer.ticks_per_second))
        return ObserverAPI(runners[-1], history=history, spend=spend, spending=spending)

    def watcher() -> ObserverAPI:
        return WatchingAPI(env.data_dir, config, history=history)

    if "web_driver" not in os.environ.get("TEXTUAL_DRIVER", ""):  # a page has no terminal
        print("Opening the world...", file=sys.stderr)
    try:
        history = HistoryReader(env.data_dir / "world.db")
    except StorageError as exc:
        raise CliError(str(exc)) from None
    api: ObserverAPI | SharingAPI = watcher()
    try:
        if request.view_only:  # never takes the world
            api.start()
        else:
            first = engine_api()
            try:
                first.start()  # every check an engine makes (a key, the models) here
            except RuntimeError:
                cause = first.runner.error
                if isinstance(cause, WorldBusyError):  # another process runs it: watch
                    first = None
                elif isinstance(cause, (CliError, StorageError, ConfigError)):
                    raise cause from None
                else:
                    raise CliError(f"the world could not be opened: {cause}") from None
            pace = config.settings.observer.ticks_per_second
            api = SharingAPI(engine_api, watcher, first=first, pace=pace)
            api.start()
        from services.simulation import clock_of

        code = observe_world(api, str(env.data_dir), clock_of(config))
    finally:
        api.stop()
        history.close()
    halted = next((e.halted for e in engines if e.halted is not None), None)
    if halted is not None:
        print(f"Stopped: {halted}", file=sys.stderr)
        return EXIT_RUNTIME
    if budget:
        print(f"Paused: {budget[0]}. Raise the budget in settings.yaml (claude.budgets) "
              "to go on.", file=sys.stderr)
    return code


def spending_of(wired: WiredEngine, seconds: float, ticks: int) -> Spending | None:
    """What the header's spend rate and pace are made from, read on the engine thread
    (the capacities live on its loop) as a snapshot is made; None when Claude speaks for
    nobody. An agent-tick is a tick one agent Claude speaks for lived this session;
    `seconds` and `ticks` are the session's, over every engine it ran (it builds one each
    time it takes the world: observe/sharing.py)."""
    if wired.claude is None:
        return None
    paces = []
    for room in wired.capacities.all().values() if wired.capacities is not None else ():
        if (pace := room.pace()) is not None:
            kind, limit, waited = pace
            paces.append(Pace(room.model, WORDS.get(kind, kind), limit, waited))
    paces.sort(key=lambda p: -p.waited)
    return Spending(seconds, ticks * len(wired.claude.profiles),
                    wired.meter.ticks_per_day, tuple(paces))
