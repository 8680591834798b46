"""EngineRunner: the engine in its own thread, driven by commands from another."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from engine import EngineRunner, HearthEngine
from services.mind import MindDefaults
from storage import Storage


def _runner(world: Path, config, mind) -> EngineRunner:
    async def make() -> HearthEngine:
        engine = await HearthEngine.open(Storage(world), config, mind=mind)
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


class _RefusedMind(MindDefaults):
    """A mind whose API refuses the key from the third turn on: it raises MindHalt, as
    ClaudeMind does on a 401 (adapters/claude_calls.py halting_cause)."""

    kind = "scripted"
    reads_text = True

    def __init__(self, inner) -> None:  # noqa: ANN001 (the conftest's ScriptedMind)
        self.inner = inner
        self.begun = 0

    def begin(self, start):  # noqa: ANN001, ANN201
        from services.mind import MindHalt

        self.begun += 1
        if self.begun <= 2:
            return self.inner.begin(start)
        outer = self

        class Refused:
            async def next_calls(self, outcomes):  # noqa: ANN001, ANN201
                raise MindHalt("the API refused the key: check ANTHROPIC_API_KEY")

            async def finish(self, outcomes, reason):  # noqa: ANN001, ANN201
                pass

            def record(self):  # noqa: ANN201
                return {"begun": outer.begun}

        return Refused()

    def get_state(self, agent):  # noqa: ANN001, ANN201
        return self.inner.get_state(agent)

    def set_state(self, agent, state):  # noqa: ANN001, ANN201
        self.inner.set_state(agent, state)


def test_a_mind_that_can_go_on_no_more_pauses_the_observers_run_and_says_why(
    small_world: Path, config, scripted
) -> None:
    from observe.api import ObserverAPI

    runner = _runner(small_world, config, _RefusedMind(scripted()))
    api = ObserverAPI(runner)
    api.start()
    try:
        runner.request_run()  # without end: only the halt can stop it
        assert _wait(lambda: runner.is_paused and runner.engine.halted is not None)
        state = api.run_state()
        assert state.paused and state.error is not None and "ANTHROPIC_API_KEY" in state.error
        ticks = runner.ticks_run
        time.sleep(0.3)
        assert runner.ticks_run == ticks  # it waits for a person, not in a loop
    finally:
        api.stop()
    async def done() -> set[str]:
        async with Storage(small_world, create=False, read_only=True) as storage:
            return await storage.engine.turns_done(0)

    import asyncio
    assert len(asyncio.run(done())) == 2  # the refused turns are given back, not recorded
