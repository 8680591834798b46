"""What watching costs: the live observer over 1,000 agents while the engine runs.

    python -m bench observer

Issue 7 asks, with 1,000 agents in a 500x500 world, for the UI's work per tick to
stay within 16 ms (one frame at 60 Hz) and for a key press to be handled within
50 ms while the engine runs. This bench makes a default world with 1,000 agents
(`hearth --init --agents 1000`, as a user would), opens the real observer app
headless (`App.run_test`, a 200x60 terminal) over the real engine thread with
offline minds, lets it run, and measures on the UI thread:

- *update*: from the moment the app takes a finished tick (`WorldAdvanced`) until the
  screen is redrawn with it (handing the snapshot to every panel, then Textual's
  repaint of what changed);
- *handler*: the first part alone (the panels' own work);
- *key*: from pressing a key (`j`, the grid's cursor down) until the cursor has moved,
  while ticks keep arriving.

The engine thread keeps running throughout: both threads share one interpreter
(and its lock), so these are the figures a person would see.
"""

from __future__ import annotations

import asyncio
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


async def _measure(root: Path) -> dict[str, list[float]]:
    from textual import events

    import main
    from config import load_config
    from engine import EngineRunner
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
        wired = await main.wire_engine(env, config, storage, "offline", lambda _: None)
        await wired.engine.initialize()
        wired.engine.on_close.insert(0, storage.close)
        return wired.engine

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
            app.update_ms.clear()
            app.handler_ms.clear()
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
            while app.ticks_seen < TICKS + 3:
                await asyncio.sleep(0.05)
            api.pause()
            update, handler = list(app.update_ms), list(app.handler_ms)
            ticks = app.ticks_seen
            await pilot.press("q")
    finally:
        api.stop(10)
        api.history.close()
    return {"update": update, "handler": handler, "key": keys, "ticks": [float(ticks)]}


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
                                ("handler", "panels' work per tick", None),
                                ("key", "key press handled", 50.0)):
        values = got[name]
        med, p95, top = statistics.median(values), _pct(values, 0.95), max(values)
        ok = None if target is None else p95 <= target
        figures.append(Figure(
            f"{label} (ms, {len(values)} samples)",
            f"median {med:.1f}, p95 {p95:.1f}, max {top:.1f}",
            "" if target is None else f"<= {target:g} ms", ok))
    figures.append(Figure("ticks watched", f"{int(got['ticks'][0])} of 1,000 agents"))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name}: {figure.value} {figure.target}")
    sys.exit(0)
