"""Memory of a model-mind run under the cycle collector's policy (issue 40).

    python -m bench collector

A small world (64x48, 8 agents) lives 200 ticks with Claude minds talking to the
Messages API stand-in (tests/messages_standin.py, through the real SDK over
httpx2.MockTransport; each reply takes a few milliseconds, so turns overlap as they do
with a real model), once with the engine's policy (the collector paused only for ticks
whose minds all answer at once: never here) and once with the policy it replaced
(paused for every tick, and each tick's survivors frozen). Each arm runs in a process
of its own, the two interleaved twice; reported per arm: the peak resident memory
(`ru_maxrss`; the stand-in lives in the same process, its record of what it served
cleared every tick), the objects the collector tracks at the end, and how many it holds
frozen (never walked again, and a dead cycle among them never reclaimed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

from bench import Figure

TICKS = 200
AGENTS = 8


def _arm(always_pause: bool) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.collector", "--arm", "old" if always_pause else "new"],
        capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> list[Figure]:
    arms: dict[str, list[dict[str, float]]] = {"new": [], "old": []}
    for _ in range(2):
        for name in ("new", "old"):
            arms[name].append(_arm(name == "old"))
    out = []
    for name, words in (("new", "paused only when every mind answers at once"),
                        ("old", "paused and frozen every tick")):
        runs = arms[name]
        out.append(Figure(
            f"{TICKS} ticks of {AGENTS} Claude agents, collector {words}",
            "peak RSS " + " / ".join(f"{r['rss_mb']:.0f} MB" for r in runs)
            + "; tracked objects at the end " + " / ".join(f"{r['tracked']:,.0f}" for r in runs)
            + "; frozen " + " / ".join(f"{r['frozen']:,.0f}" for r in runs)
            + "; seconds " + " / ".join(f"{r['seconds']:.1f}" for r in runs)))
    return out


async def _live(always_pause: bool) -> dict[str, float]:
    import gc
    import resource
    import time
    from pathlib import Path

    from adapters.claude_mind import ClaudeMind, ClaudeProfile
    from config import load_config
    from engine.engine import HearthEngine
    from services.world_setup import create_world
    from storage import Storage
    from tests.messages_standin import StrictMessagesApi

    config = load_config(None)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        async with Storage(data) as storage:
            await create_world(storage, config, seed=5, size=(64, 48), agent_count=AGENTS)
            agents = await storage.agents.get_all_agents()
        api = StrictMessagesApi(latency=0.003)
        mind = ClaudeMind(api.client(), {a.name: ClaudeProfile("claude-sonnet-5-5",
                                                               a.personality, "low")
                                         for a in agents})
        storage = Storage(data)
        engine = await HearthEngine.open(
            storage, config, mind=mind, agents_dir=Path(tmp) / "agents")
        if always_pause:  # the policy before issue 40: whatever the minds
            started = engine.collector.tick_started
            engine.collector.tick_started = lambda *, pause=True: started(pause=True)
        began = time.perf_counter()
        try:
            for _ in range(TICKS):
                await engine.tick_once()
                api.served.clear()  # the stand-in's own record is not the engine's memory
        finally:
            await engine.close()
            await storage.close()
        return {"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "tracked": len(gc.get_objects()), "frozen": gc.get_freeze_count(),
                "seconds": time.perf_counter() - began}


if __name__ == "__main__":
    import argparse
    import asyncio

    parser = argparse.ArgumentParser(prog="python -m bench.collector")
    parser.add_argument("--arm", choices=("new", "old"))
    arm = parser.parse_args().arm
    if arm is None:
        for figure in run():
            print(f"{figure.name}: {figure.value}")
    else:
        print(json.dumps(asyncio.run(_live(arm == "old"))))
