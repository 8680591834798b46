"""EngineRunner: the engine in its own thread, driven by commands from another."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from engine import EngineRunner, HearthEngine
from storage import Storage


def _runner(world: Path, config, mind) -> EngineRunner:
    async def make() -> HearthEngine:
        engine = HearthEngine(Storage(world), config, mind=mind)
        await engine.initialize()
        return engine

    return EngineRunner(make)


def _wait(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_a_requested_run_of_n_ticks_runs_exactly_n_and_reports_each(
    small_world: Path, config, scripted
) -> None:
    runner = _runner(small_world, config, scripted())
    seen: list[tuple[int, str]] = []
    runner.on_tick(lambda ctx: seen.append((ctx.tick, threading.current_thread().name)))
    runner.start()
    try:
        assert runner.is_running and runner.is_paused
        runner.request_run(3)
        assert _wait(lambda: len(seen) == 3)
        time.sleep(0.2)
        assert [t for t, _ in seen] == [0, 1, 2]
        assert {name for _, name in seen} == {"hearth-engine"}
        assert runner.is_paused
        runner.request_tick()
        assert _wait(lambda: len(seen) == 4)
    finally:
        assert runner.stop(timeout=10)
    assert not runner.is_running


def test_pause_stops_an_endless_run_and_stop_closes_cleanly(
    small_world: Path, config, scripted
) -> None:
    runner = _runner(small_world, config, scripted())
    ticks: list[int] = []
    runner.on_tick(lambda ctx: ticks.append(ctx.tick))
    runner.start()
    try:
        runner.request_run()
        assert _wait(lambda: len(ticks) >= 3)
        assert not runner.is_paused
        runner.request_pause()
        assert _wait(lambda: runner.is_paused)
        time.sleep(0.3)
        settled = len(ticks)
        time.sleep(0.3)
        assert len(ticks) == settled
    finally:
        started = time.monotonic()
        assert runner.stop(timeout=10)
        assert time.monotonic() - started < 2.0
    async def read() -> int:
        async with Storage(small_world, create=False, read_only=True) as storage:
            state = await storage.world.get_world_state()
            return state.tick

    import asyncio
    assert asyncio.run(read()) == len(ticks)


def test_stop_mid_run_finishes_the_turn_in_flight(small_world: Path, config, scripted) -> None:
    mind = scripted(delay=0.05)
    runner = _runner(small_world, config, mind)
    runner.start()
    runner.request_run()
    assert _wait(lambda: len(mind.finished) >= 2)
    assert runner.stop(timeout=10)
    # Every turn that began also finished (none cut off half way).
    assert len(mind.finished) == len(mind.starts)


def test_a_failing_callback_does_not_stop_the_engine(small_world: Path, config, scripted) -> None:
    runner = _runner(small_world, config, scripted())
    good: list[int] = []
    runner.on_tick(lambda ctx: 1 / 0)
    runner.on_tick(lambda ctx: good.append(ctx.tick))
    runner.start()
    try:
        runner.request_run(2)
        assert _wait(lambda: len(good) == 2)
    finally:
        runner.stop(timeout=10)


def test_an_engine_that_cannot_start_is_reported(tmp_path: Path, config, scripted) -> None:
    runner = _runner(tmp_path / "nothing-here", config, scripted())
    try:
        runner.start()
    except RuntimeError as exc:
        assert "could not start" in str(exc)
    else:
        raise AssertionError("starting without a world must fail")
