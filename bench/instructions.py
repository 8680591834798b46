"""Instructions a 1,000-agent tick executes, counted by valgrind: a figure the machine's
noise cannot move.

    python -m bench instructions

On this project's shared two-core machines the same code's tick time ranges over
1.5x within an hour, so a change worth 5% cannot be seen in `bench engine`. This
bench runs the same world (1,000 offline agents on 500x500, daytime) under
valgrind's callgrind, counts the instructions of two ticks after two warm-up
ticks, and splits them by thread: the engine's thread (the one whose time is the
tick) and the others (the storage's writer, WAL checkpoints). Commits are waited
for at once, not written behind, so the split does not depend on timing. The
counts are the same from run to run within a fraction of a percent; compare
them between commits. Callgrind runs the program about 50 times slower: a
minute or two. Without valgrind on the machine the bench says so and measures
nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import Figure

AGENTS, SIDE, WARM_TICKS, TICKS = 1_000, 500, 2, 2


def callgrind_totals(text: str) -> int:
    """The instruction count of one callgrind output file (its `totals:` line, or the
    `summary:` line of a file written at program end)."""
    total = None
    for line in text.splitlines():
        if line.startswith(("totals:", "summary:")):
            total = int(line.split(":", 1)[1].split()[0])
            if line.startswith("totals:"):
                return total
    if total is None:
        raise ValueError("not a callgrind output file: it has no totals line")
    return total


def _thread_number(path: Path) -> int:
    """Callgrind names per-thread files `<out>-01`, `<out>-02`, ... (1 is the main thread)."""
    return int(path.name.rsplit("-", 1)[1])


def _toggle(on: bool) -> None:
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
                   check=True, capture_output=True)


async def _child() -> dict[str, int]:
    """Run inside valgrind: warm up, then count TICKS ticks (instrumented) and their turns."""
    from adapters.offline_mind import OfflineMind
    from bench.engine_ticks import _world_with
    from config import load_config
    from engine import HearthEngine
    from services.world_setup import write_world
    from storage import Storage

    config = load_config(None)
    world = _world_with(config, AGENTS, SIDE)
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await write_world(storage, world, config)
            mind = OfflineMind(world.state.seed, {a.name: a.personality for a in world.agents})
            engine = await HearthEngine.open(storage, config, mind=mind)
            for _ in range(WARM_TICKS):
                await engine.tick_once()
            await engine.flush()
            turns = actions = 0
            _toggle(True)
            for _ in range(TICKS):
                ctx = await engine.tick_once()
                turns += len(ctx.turn_results)
                actions += ctx.action_count
            await engine.flush()
            _toggle(False)
            await engine.close()
    return {"turns": turns, "actions": actions}


def _measure(valgrind: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [valgrind, "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
             f"--callgrind-out-file={out}", sys.executable, "-m", "bench.instructions",
             "--child"],
            capture_output=True, text=True, check=False,
            cwd=Path(__file__).resolve().parent.parent,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the counted run failed: {done.stderr.strip()[-500:]}")
        counts = json.loads(done.stdout.strip().splitlines()[-1])
        files = sorted(Path(tmp).glob("callgrind.out-*"), key=_thread_number)
        totals = {_thread_number(f): callgrind_totals(f.read_text()) for f in files}
    main = totals.pop(1, 0)
    return {"main": main, "others": sum(totals.values()), **counts}


def run() -> list[Figure]:
    valgrind = shutil.which("valgrind")
    if valgrind is None or shutil.which("callgrind_control") is None:
        return [Figure(f"{AGENTS} agents: instructions a tick",
                       "not measured: valgrind is not installed")]
    r = _measure(valgrind)
    turns = max(r["turns"], 1)
    return [
        Figure(f"{AGENTS} agents: instructions a tick, engine thread",
               f"{r['main'] / TICKS / 1e6:,.1f} M ({r['turns'] / TICKS:.0f} turns, "
               f"{r['actions'] / turns:.2f} actions a turn)"),
        Figure(f"{AGENTS} agents: instructions a turn, engine thread",
               f"{r['main'] / turns / 1e3:,.0f} k (all its work over turns taken)"),
        Figure(f"{AGENTS} agents: instructions a tick, other threads (writer, WAL)",
               f"{r['others'] / TICKS / 1e6:,.1f} M"),
    ]


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    print(json.dumps(asyncio.run(_child())))
