"""What the Gardener costs the engine: `--run` ticks with and without it beside them.

    python -m bench gardener

The issue: the Gardener running beside `hearth --run` must never block the engine's
ticks nor slow them by more than 5%. The Gardener is a process of its own; it reads
world.db through a read-only connection, writes one short transaction per cycle (its
cycle and its requests), and the engine reads those requests at the start of each
tick. What the two share is the database and this machine's processors.

The bench makes a default world with 1,000 agents as a user would (`hearth --init
--agents 1000 --seed 5`), then lives its first 48 ticks (two in-world days) so that
the Gardener's 48-tick window is full of history, as in a world that has been running
for a while: its observing then reads as much as it ever will. That primed world is
the starting point of every measured run.

Each run is a fresh copy of the primed world (world.db and the agents' homes) and a
real `hearth --run 14 --quiet --mind offline` process on it: 08:00 to 21:00, the
daytime ticks (night ticks, with everyone asleep, cost little and would flatter the
figures). The offline mind is deterministic, so every run does the same work, tick
for tick; that is why each run gets a fresh copy rather than the world going on from
run to run, where the two arms would see different hours and different worlds. The
first tick of a process (first sight of everyone, cold caches) is left out; the other
13 are timed by the engine itself, which records each tick's duration in
`tick_metrics` (duration_ms, and each phase's share).

A "with" run starts `hearth --gardener` first, with a copy of the shipped config whose
settings make it work as hard as it can (`every_ticks: 1`, `poll_seconds: 0.2`: a
cycle for every tick), waits for its first cycle (so its start-up is not counted
against the engine), runs the engine, then stops the Gardener with Ctrl+C (SIGINT)
and waits for it. The cycles it recorded while the engine's ticks ran are counted
from `gardener_cycles`, so the figure shows it really worked.

The engine is given the same config folder (only the Gardener reads what was
changed), so both arms run with the very same settings.

This machine has two cores and is shared, so tick times wander by 20% or more from
run to run. The runs are made in interleaved pairs, without and with, the order swapped
every other pair (without-with, with-without, ...) so that a drift over the bench
falls on both arms alike. Reported:

- the median tick without and with the Gardener (p95 and the slowest beside them),
  and the ratio with / without of the medians: the target is <= 1.05;
- the same ratio for the slow ticks (p95), where a tick the Gardener held up would
  show even if the median did not move, and the ratio of medians pair by pair, to
  show how much of either is noise;
- the engine's turns phase in both arms (its CPU work: where sharing two cores with
  the Gardener would show), its commit phase (where a wait for the Gardener's write
  lock would show) and its gardener phase (reading and applying the requests);
- the turns per timed tick in both arms (the Gardener's regrowth may change what
  agents find; this shows whether the work stayed the same);
- the Gardener's cycles during the "with" runs, and the CPU time its process took
  (start-up included) over the time it was alive;
- what a cycle costs on 1,000 agents with a full window, timed in this process on a
  fresh copy of the primed world: the first look of a new source (it reads the whole
  window of history), then, after each of a few ticks lived by `hearth --run 1`, the
  same source's look (it reads only what the tick wrote: storage/health_memo.py) and
  the whole cycle (observing, triage, the rules' decision and the write).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import Figure

AGENTS, SEED = 1_000, 5
PRIME_TICKS = 48      # two in-world days: the Gardener's window (window_ticks) is full
RUN_TICKS = 14        # 08:00 to 21:00, every daytime tick of a day
WARMUP_TICKS = 1      # a process's first tick: first sight of everyone, cold caches
PAIRS = 12
GARDENER_SETTINGS = {"every_ticks": "1", "poll_seconds": "0.2"}
PROJECT = Path(__file__).resolve().parent.parent


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _child_env() -> dict[str, str]:
    """The environment for Hearth's processes: no API key, so the offline mind plays
    every agent and the Gardener's rules decide (nothing spent, nothing waited on)."""
    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY", None)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _hearth(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "main", *(str(a) for a in args)]


def _dirs(world: Path) -> list[str | Path]:
    return ["--data-dir", world / "data", "--agents-dir", world / "agents"]


def _hard_working_config(into: Path) -> Path:
    """A copy of the shipped config with the Gardener set to cycle at every tick."""
    from config import CONFIG_DIR

    shutil.copytree(CONFIG_DIR, into, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    settings = into / "settings.yaml"
    text = settings.read_text(encoding="utf-8")
    section = re.search(r"^gardener:.*?(?=^\S|\Z)", text, flags=re.M | re.S)
    if section is None:
        raise RuntimeError("settings.yaml has no gardener: section to edit")
    body = section.group(0)
    for key, value in GARDENER_SETTINGS.items():
        body, found = re.subn(rf"^(  {key}:)[ \t]*[^\s#]+", rf"\g<1> {value}", body, flags=re.M)
        if found != 1:
            raise RuntimeError(f"settings.yaml: no gardener.{key} to set")
    settings.write_text(text[:section.start()] + body + text[section.end():], encoding="utf-8")
    return into


def _hear_ctrl_c() -> None:
    """In the child, before it runs: SIGINT back to its default, so Python turns it into
    KeyboardInterrupt even when the bench itself was started in the background
    (`... &` in a script starts it with SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _live(world: Path, ticks: int, config_dir: Path) -> None:
    """`hearth --run ticks --quiet` with offline minds on the world; raises if it fails."""
    done = subprocess.run(
        _hearth("--run", ticks, "--quiet", "--mind", "offline",
                "--config-dir", config_dir, *_dirs(world)),
        cwd=PROJECT, env=_child_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"hearth --run {ticks} on {world} failed ({done.returncode}):\n"
                           f"{done.stderr}")


class _Gardener:
    """`hearth --gardener` as a child process, its output read line by line."""

    def __init__(self, world: Path, config_dir: Path) -> None:
        self.lines: list[str] = []
        self.cpu_s = self.alive_s = 0.0
        self._cycled = threading.Event()
        self._born = time.perf_counter()
        self.proc = subprocess.Popen(
            _hearth("--gardener", "--config-dir", config_dir, *_dirs(world)),
            cwd=PROJECT, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1, preexec_fn=_hear_ctrl_c)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("cycle "):
                self._cycled.set()

    def wait_for_first_cycle(self, timeout: float = 120.0) -> None:
        if not self._cycled.wait(timeout) or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError("the Gardener did not start cycling:\n" + "\n".join(self.lines))

    def stop(self) -> int:
        """Ctrl+C, as a person would stop it, then wait for it to finish. Its CPU time
        is what this process's reaped children gained meanwhile (the engine's run was
        reaped before)."""
        if self.proc.poll() is None:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            self.alive_s = time.perf_counter() - self._born
        self._reader.join(5)
        return self.proc.returncode


def _ticks(db: Path, first: int, last: int) -> list[tuple[float, int, dict[str, float]]]:
    """(duration ms, turns, phase ms) of ticks first..last, as the engine recorded them."""
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT tick, duration_ms, turns, phases FROM tick_metrics "
                            "WHERE tick BETWEEN ? AND ? ORDER BY tick", (first, last)).fetchall()
    if len(rows) != last - first + 1:
        raise RuntimeError(f"{db}: expected ticks {first}..{last} in tick_metrics, "
                           f"found {[r[0] for r in rows]}")
    return [(ms, turns, dict(json.loads(phases))) for _, ms, turns, phases in rows]


def _cycles_during(db: Path, first: int, last: int) -> int:
    """Cycles the Gardener ran while the engine's ticks first..last were under way (a
    cycle records the next tick to run, so one made while tick t runs records t)."""
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        (count,) = conn.execute("SELECT count(*) FROM gardener_cycles WHERE tick BETWEEN ? "
                                "AND ?", (first, last)).fetchone()
    return int(count)


def _start_tick(db: Path) -> int:
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        (tick,) = conn.execute("SELECT max(tick) + 1 FROM tick_metrics").fetchone()
    return int(tick)


def _one_run(primed: Path, world: Path, config_dir: Path, with_gardener: bool) -> dict:
    if world.exists():
        shutil.rmtree(world)
    shutil.copytree(primed, world)
    db = world / "data" / "world.db"
    start = _start_tick(db)
    gardener = _Gardener(world, config_dir) if with_gardener else None
    try:
        if gardener is not None:
            gardener.wait_for_first_cycle()
        _live(world, RUN_TICKS, config_dir)
    finally:
        code = gardener.stop() if gardener is not None else None
    if gardener is not None and code not in (0, 130):
        raise RuntimeError(f"the Gardener ended with {code}:\n" + "\n".join(gardener.lines))
    timed = _ticks(db, start + WARMUP_TICKS, start + RUN_TICKS - 1)
    return {
        "ms": [ms for ms, _, _ in timed],
        "turns": [turns for _, turns, _ in timed],
        "turns_phase": [phases.get("turns", 0.0) for _, _, phases in timed],
        "commit": [phases.get("commit", 0.0) for _, _, phases in timed],
        "gardener_phase": [phases.get("gardener", 0.0) for _, _, phases in timed],
        # Not the cycle it made before the run (which records `start`, the tick to come).
        "cycles": _cycles_during(db, start + 1, start + RUN_TICKS - 1) if with_gardener else 0,
        "gardener_cpu": (gardener.cpu_s, gardener.alive_s) if gardener is not None else None,
    }


def _time_cycles(primed: Path, world: Path, config_dir: Path,
                 repeat: int = 4) -> tuple[float, list[float], list[float]]:
    """Wall ms of observing as `hearth --gardener` does it, on a fresh copy of the
    primed world: the first look of a new source (it reads the whole window), then,
    after each tick the engine lives (`hearth --run 1`), the look of the same kept
    source (it reads only what that tick wrote) and the whole cycle around it."""
    from config import load_config
    from services.gardener.cycle import run_cycle
    from services.gardener.observe import observe, observe_args
    from storage.gardener_db import GardenerStore
    from storage.gardener_source import SqliteHealthSource

    if world.exists():
        shutil.rmtree(world)
    shutil.copytree(primed, world)
    config = load_config(config_dir)
    settings = config.settings.gardener
    path = world / "data" / "world.db"
    observing, whole = [], []
    with GardenerStore(path) as store:
        reader = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            source = SqliteHealthSource(reader)
            landmarks = source.landmarks()
            args = observe_args(config)
            started = time.perf_counter()
            observe(source, **args)
            first = (time.perf_counter() - started) * 1000
            for _ in range(repeat):
                _live(world, 1, config_dir)
                started = time.perf_counter()
                figures = observe(source, **args)
                observed = time.perf_counter()
                asyncio.run(run_cycle(
                    figures, landmarks, store,
                    thresholds=settings.thresholds.to_core(), caps=settings.caps.to_core(),
                    decider=None, memory_cycles=settings.memory_cycles))
                observing.append((observed - started) * 1000)
                whole.append((time.perf_counter() - started) * 1000)
        finally:
            reader.close()
    return first, observing, whole


def _spread(values: list[float]) -> str:
    return (f"median {statistics.median(values):.1f}, p95 {_pct(values, 0.95):.1f}, "
            f"max {max(values):.1f}")


def run() -> list[Figure]:
    import main

    with tempfile.TemporaryDirectory(prefix="hearth-bench-gardener-") as tmp:
        root = Path(tmp)
        primed = root / "primed"
        said = io.StringIO()  # it names all 1,000 agents: shown only if it fails
        with contextlib.redirect_stdout(said):
            code = main.main(["--init", "--agents", str(AGENTS), "--seed", str(SEED),
                              "--data-dir", str(primed / "data"),
                              "--agents-dir", str(primed / "agents")])
        if code != 0:
            raise RuntimeError(f"could not create the world:\n{said.getvalue()}")
        config_dir = _hard_working_config(root / "config")
        _live(primed, PRIME_TICKS, config_dir)

        arms: dict[bool, list[dict]] = {False: [], True: []}
        for pair in range(PAIRS):
            order = (False, True) if pair % 2 == 0 else (True, False)
            for with_gardener in order:
                arms[with_gardener].append(
                    _one_run(primed, root / "run", config_dir, with_gardener))
        first_look, observing, whole = _time_cycles(primed, root / "cycles", config_dir)

    def pooled(with_gardener: bool, key: str) -> list[float]:
        return [v for r in arms[with_gardener] for v in r[key]]

    without, with_ = pooled(False, "ms"), pooled(True, "ms")
    ratio = statistics.median(with_) / statistics.median(without)
    pair_ratios = [statistics.median(w["ms"]) / statistics.median(o["ms"])
                   for o, w in zip(arms[False], arms[True], strict=True)]
    cycles = [r["cycles"] for r in arms[True]]
    gardener_cpu = sum(r["gardener_cpu"][0] for r in arms[True])
    gardener_alive = sum(r["gardener_cpu"][1] for r in arms[True])

    def phase(key: str) -> str:
        return (f"{statistics.median(pooled(False, key)):.1f} / "
                f"{statistics.median(pooled(True, key)):.1f}")
    ticks_per_run = RUN_TICKS - WARMUP_TICKS
    return [
        Figure(f"tick without the Gardener (ms, {len(without)} ticks)", _spread(without)),
        Figure(f"tick with the Gardener beside it (ms, {len(with_)} ticks)", _spread(with_)),
        Figure("slowdown: median with / median without", f"{ratio:.3f}", "<= 1.05",
               ratio <= 1.05),
        Figure("the slow ticks: p95 with / p95 without",
               f"{_pct(with_, 0.95) / _pct(without, 0.95):.3f}"),
        Figure(f"median with / without, pair by pair ({PAIRS} pairs)",
               ", ".join(f"{r:.2f}" for r in pair_ratios)
               + f" (median {statistics.median(pair_ratios):.3f})"),
        Figure("Gardener cycles during the 'with' runs",
               f"{sum(cycles)} ({', '.join(map(str, cycles))} per run of {RUN_TICKS} ticks)",
               "> 0", sum(cycles) > 0 and min(cycles) > 0),
        Figure("engine's phases (ms, median): without / with",
               f"turns {phase('turns_phase')}, commit {phase('commit')} (commit max "
               f"{max(pooled(False, 'commit')):.1f} / {max(pooled(True, 'commit')):.1f})"),
        Figure("engine's gardener phase, with (ms)",
               f"median {statistics.median(pooled(True, 'gardener_phase')):.2f}, "
               f"max {max(pooled(True, 'gardener_phase')):.2f} "
               f"(without: median {statistics.median(pooled(False, 'gardener_phase')):.2f})"),
        Figure("turns per timed tick: without / with",
               f"{sum(pooled(False, 'turns')) / len(without):.0f} / "
               f"{sum(pooled(True, 'turns')) / len(with_):.0f} "
               f"({ticks_per_run} ticks a run, 08:00 to 21:00 with the first left out)"),
        Figure("Gardener process CPU during the 'with' runs",
               f"{gardener_cpu:.1f} s over {gardener_alive:.1f} s alive "
               f"({gardener_cpu / gardener_alive:.0%} of a core; its start-up included)"),
        Figure(f"the Gardener's first look on {AGENTS:,} agents, {PRIME_TICKS} ticks lived (ms)",
               f"{first_look:.0f} (a new source reads the whole window)"),
        Figure("a cycle a tick later, same source (ms)",
               f"observing median {statistics.median(observing):.0f}, whole cycle median "
               f"{statistics.median(whole):.0f} (max {max(whole):.0f})"),
    ]
