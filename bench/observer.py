"""What watching costs: the live observer over 1,000 agents while the engine runs.

    python -m bench observer

Issue 7 asks, with 1,000 agents in a 500x500 world, for the UI's work per tick to
stay within 16 ms (one frame at 60 Hz) and for a key press to be handled within
50 ms while the engine runs. This bench makes a default world with 1,000 agents
(`hearth --init --agents 1000`, as a user would), opens the real observer app
headless (`App.run_test`, a 200x60 terminal) over the real engine thread with
offline minds, lets it run, and measures the UI thread's CPU time (`thread_time`:
waiting for the engine thread's turn at the interpreter is not work):

- *update*: the work one tick brings: handling its `WorldAdvanced` (handing the
  snapshot to the panels) plus the first frame Textual paints after it (the repaint
  of what changed, and the encoding of it for the terminal, which a headless app
  skips and this bench does as a real terminal's driver would). A frame is timed by
  wrapping the screen's compositor refresh, so no frame can be missed or misplaced;
- *handler*: the first part alone;
- *frame*: every frame painted while the ticks ran, whatever it held (the twice-a-
  second summaries have frames of their own);
- *UI thread busy*: all of the UI thread's CPU time over the run, as a share of the
  time: summaries, idle housekeeping and all included;
- *key*: from pressing a key (`j`, the grid's cursor down) until the cursor has moved,
  while ticks keep arriving (wall time).

The engine thread keeps running throughout: both threads share one interpreter
(and its lock), so these are the figures a person would see.
"""

from __future__ import annotations

import asyncio
import bisect
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import Figure

AGENTS, TICKS, KEYS = 1_000, 30, 30
SIZE = (200, 60)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _FrameClock:
    """Times, on the UI thread, each tick's handling and each painted frame."""

    def __init__(self) -> None:
        self.handled: list[tuple[float, float]] = []  # (cpu at start, cpu spent)
        self.frames: list[tuple[float, float]] = []
        self.on = False

    def install(self, app_class: type) -> None:
        import io

        from rich.console import Console
        from textual.screen import Screen

        clock = self
        console = Console(file=io.StringIO(), force_terminal=True,
                          color_system="truecolor", width=SIZE[0], height=SIZE[1])
        # Wrapped where it is defined (HearthApp's mixin EngineLink): Textual calls each
        # class's own handler along the MRO, so a wrapper set on a subclass would run
        # beside the handler, not instead of it.
        owner = next(c for c in app_class.__mro__ if "on_world_advanced" in vars(c))
        handle, refresh = owner.on_world_advanced, Screen._compositor_refresh

        def timed_handle(app, message):  # type: ignore[no-untyped-def]
            started = time.thread_time()
            handle(app, message)
            if clock.on:
                clock.handled.append((started, time.thread_time() - started))

        def timed_refresh(screen):  # type: ignore[no-untyped-def]
            started = time.thread_time()
            render = screen._compositor.render_update

            def render_and_encode(*args, **kwargs):  # type: ignore[no-untyped-def]
                got = render(*args, **kwargs)
                if got is not None:
                    got.render_segments(console)  # what the terminal driver would write
                return got

            screen._compositor.render_update = render_and_encode
            try:
                refresh(screen)
            finally:
                del screen._compositor.render_update
            if clock.on:
                clock.frames.append((started, time.thread_time() - started))

        owner.on_world_advanced = timed_handle
        Screen._compositor_refresh = timed_refresh

    def per_tick(self) -> tuple[list[float], list[float]]:
        """Per tick: handling plus the first frame after it; and the handling alone."""
        update, handler = [], []
        starts = [start for start, _ in self.frames]
        for started, spent in self.handled:
            i = bisect.bisect_left(starts, started + spent)
            frame = self.frames[i][1] if i < len(self.frames) else 0.0
            update.append((spent + frame) * 1000)
            handler.append(spent * 1000)
        return update, handler


async def _measure(root: Path) -> dict[str, list[float]]:
    from textual import events

    import main
    from config import load_config
    from engine import EngineRunner
    from engine.wiring import wire_engine
    from observe.api import ObserverAPI
    from observe.tui.app import HearthApp
    from observe.tui.widgets.grid import GridView
    from storage import Storage
    from storage.history import HistoryReader

    data, homes = root / "data", root / "agents"
    config = load_config(None)
    env = main.RuntimeEnv.resolve({}, main.PROJECT_DIR, data, homes)

    async def make():
        storage = Storage(data, create=False)
        await storage.open()
        wired = await wire_engine(env, config, storage, "offline", lambda _: None)
        wired.engine.on_close.insert(0, storage.close)
        return wired.engine

    clock = _FrameClock()
    clock.install(HearthApp)
    api = ObserverAPI(EngineRunner(make), history=HistoryReader(data / "world.db"))
    await asyncio.to_thread(api.start)
    app = HearthApp(api)
    keys: list[float] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            grid = app.query_one(GridView)
            api.run()
            while app.ticks_seen < 3:  # the first ticks meet everyone: warm-up
                await asyncio.sleep(0.05)
            for _ in range(KEYS):
                before = grid.cursor
                started = time.perf_counter()
                # As a terminal's key arrives: an event posted to the app (Pilot.press
                # would also wait for the app to fall idle, which a running world never does).
                app.post_message(events.Key("j", "j"))
                while grid.cursor == before:
                    await asyncio.sleep(0.0005)
                keys.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.1)
                if grid.cursor[1] >= api.snapshot.height - 2:
                    grid.centre_on(*api.snapshot.agents[0].position)
            # Then the ticks alone, every frame and every tick timed.
            first, cpu, wall = app.ticks_seen, time.thread_time(), time.perf_counter()
            clock.on = True
            while app.ticks_seen < first + TICKS:
                await asyncio.sleep(0.05)
            clock.on = False
            ticks = app.ticks_seen - first
            busy = (time.thread_time() - cpu) / (time.perf_counter() - wall)
            amortised = (time.thread_time() - cpu) * 1000 / ticks
            api.pause()
            await pilot.press("q")
    finally:
        api.stop(10)
        api.history.close()
    update, handler = clock.per_tick()
    return {"update": update, "handler": handler, "key": keys,
            "frame": [spent * 1000 for _, spent in clock.frames],
            "amortised": [amortised], "busy": [busy], "ticks": [float(ticks)]}


def run() -> list[Figure]:
    import main

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        code = main.main(["--init", "--agents", str(AGENTS), "--seed", "5",
                          "--data-dir", str(root / "data"), "--agents-dir", str(root / "agents")])
        if code != 0:
            raise RuntimeError("could not create the world")
        got = asyncio.run(_measure(root))
    figures = []
    for name, label, target in (("update", "UI update per tick", 16.0),
                                ("handler", "of it, handling the tick", None),
                                ("frame", "every frame painted", None),
                                ("key", "key press handled", 50.0)):
        values = got[name]
        med, p95, top = statistics.median(values), _pct(values, 0.95), max(values)
        ok = None if target is None else p95 <= target
        figures.append(Figure(
            f"{label} (ms, {len(values)} samples)",
            f"median {med:.1f}, p95 {p95:.1f}, max {top:.1f}",
            "" if target is None else f"<= {target:g} ms", ok))
    figures.append(Figure("UI thread busy while running",
                          f"{got['busy'][0]:.0%} of a core, {got['amortised'][0]:.1f} ms "
                          "per tick with everything"))
    figures.append(Figure("ticks timed", f"{int(got['ticks'][0])} of 1,000 agents"))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name}: {figure.value} {figure.target}")
    sys.exit(0)
