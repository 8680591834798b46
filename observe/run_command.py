"""`hearth --run N`: live N ticks, printing each (`observe/console.py`: lines, or one
JSON object a tick with --json; only the summary with --quiet).

The engine is wired as for the observer (`engine/wiring.py`). Ctrl+C, a polite kill or
a closed terminal finish the turns in flight and stop; a second Ctrl+C stops at once,
dropping them (they are taken again next run). A disk that fails the run is said in one
line; what was committed stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from config import HearthConfig, RuntimeEnv
from engine.wiring import check_claude_before_a_world, choose_minds, wire_engine
from observe.console import RunSummary, tick_json, tick_lines
from observe.progress import creation_progress
from services.budget import spend_rate
from services.command_errors import EXIT_BUDGET, EXIT_INTERRUPTED, EXIT_OK, EXIT_RUNTIME
from services.init_command import init_world
from storage import Storage, StorageError
from storage.batch_file import BatchWait, write_pending

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
"""What stops a run cleanly: Ctrl+C, a polite kill, and a closed terminal (SIGHUP)."""


async def run_world(
    env: RuntimeEnv, config: HearthConfig, count: int, *, quiet: bool, as_json: bool,
    mind: str | None = None, economy: bool = False,
) -> int:
    """`_run_world`, with a disk that fails it (full, failing, read-only) said in one line
    naming where; what was committed stays, and the next run goes on from it."""
    from storage.errors import is_storage_fault, storage_fault_line

    try:
        return await _run_world(env, config, count, quiet=quiet, as_json=as_json, mind=mind,
                                economy=economy)
    except OSError as exc:
        if is_storage_fault(exc):
            raise StorageError(storage_fault_line(exc)) from None
        raise


async def _run_world(
    env: RuntimeEnv, config: HearthConfig, count: int, *, quiet: bool, as_json: bool,
    mind: str | None = None, economy: bool = False,
) -> int:
    """Live `count` ticks; Ctrl+C finishes the turn in flight and stops.

    Each agent's mind is Claude or the offline one (`adapters/mind_choice.py`); a
    choice that cannot be honoured (Claude with no key) is refused before anything
    runs, not even a new world."""
    notes = sys.stderr if as_json else sys.stdout
    choose_minds([], config, mind, env)  # refuses Claude without a key, before anything
    if not Storage.world_exists(env.data_dir):
        await check_claude_before_a_world(config, env, mind)
        print("No world yet: creating one.", file=notes)
        with contextlib.redirect_stdout(notes):
            await init_world(env, config, bar=creation_progress)
    synchronous = config.settings.storage.synchronous
    async with Storage(env.data_dir, create=False, synchronous=synchronous) as storage:
        budget: list[str] = []  # which budget stopped the run, in words
        wired = await wire_engine(env, config, storage, mind, budget.append,
                                  economy=economy,
                                  on_pending=_say_pending(env.data_dir, notes, quiet))
        engine, meter, claude = wired.engine, wired.meter, wired.claude
        if wired.seats is not None:
            print(wired.seats.line(), file=notes)
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
        began = time.perf_counter()
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
            lived = summary.ticks * len(claude.profiles)
            print("spend: " + spend_rate(meter.run, time.perf_counter() - began, lived,
                                         config.settings.time.ticks_per_day), file=notes)
        for line in wired.capacities.pace_lines() if wired.capacities is not None else ():
            print(line, file=notes)
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


def _say_pending(data_dir: Path, notes: Any, quiet: bool) -> Callable[[Any], None]:
    """`--economy`: a line when the agents' requests wait on a Message Batch, so a run
    that pauses for up to an hour says why; and `data/batch.json` for a watching
    observer (storage/batch_file.py), taken away when none is pending."""
    def say(pending: Any) -> None:
        if pending is None:
            write_pending(data_dir, None)
            return
        since = time.time() - max(0.0, time.monotonic() - pending.since)
        write_pending(data_dir, BatchWait(pending.batches, pending.requests, since))
        if not quiet:
            print(f"(waiting on {pending.batches} Message Batch(es) of {pending.requests} "
                  "request(s); results usually come within the hour)", file=notes, flush=True)
    return say
