"""World generation: time (median of 5), peak memory, violations, shares, connectivity.

    python -m bench generation

Targets (issue 3): 500x500 median <= 0.1 s; 2000x2000 median <= 1.5 s with peak
memory <= 300 MB; 0 adjacency violations; shares within +-30% of the targets; the
largest passable region >= 95% of passable cells.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc

from bench import Figure
from config import load_config
from generation import Tileset, generate
from generation.regions import largest_region_share
from generation.wfc import count_violations

SIZES = ((500, 0.1, None), (2000, 1.5, 300.0))
RUNS = 5


def run() -> list[Figure]:
    tileset = Tileset.from_traits(load_config(None).terrain.terrains)
    generate(64, 64, 0, tileset=tileset)  # warm imports and caches
    figures: list[Figure] = []
    for side, time_target, memory_target in SIZES:
        label = f"{side}x{side}"
        times = []
        worst_share = 0.0
        worst_region = 1.0
        violations = 0
        last = None
        for seed in range(RUNS):
            gc.collect()
            started = time.perf_counter()
            last = generate(side, side, seed, tileset=tileset)
            times.append(time.perf_counter() - started)
            violations += count_violations(last.codes, tileset)
            shares = last.shares()
            for i, kind in enumerate(tileset.terrains):
                deviation = abs(shares[kind] / tileset.target_shares[i] - 1.0)
                worst_share = max(worst_share, deviation)
            worst_region = min(worst_region, largest_region_share(tileset.passable[last.codes]))
        median = statistics.median(times)
        figures.append(Figure(f"{label} median of {RUNS}", f"{median:.3f} s",
                              f"<= {time_target} s", median <= time_target))
        figures.append(Figure(f"{label} runs", " ".join(f"{t:.3f}" for t in times)))
        figures.append(Figure(f"{label} adjacency violations", str(violations), "0",
                              violations == 0))
        figures.append(Figure(f"{label} worst share deviation", f"{worst_share:.1%}",
                              "<= 30%", worst_share <= 0.30))
        figures.append(Figure(f"{label} smallest largest-region share", f"{worst_region:.2%}",
                              ">= 95%", worst_region >= 0.95))
        if last is not None:
            shares = last.shares()
            figures.append(Figure(
                f"{label} shares (seed {RUNS - 1})",
                " ".join(f"{k.value} {v:.1%}" for k, v in shares.items()),
            ))
            figures.append(Figure(f"{label} solver (seed {RUNS - 1})",
                                  f"{last.stats.steps} steps, {last.stats.repairs} repairs, "
                                  f"{last.stats.restarts} restarts"))
        # Peak memory in a separate run: tracing allocations slows the timed ones.
        gc.collect()
        tracemalloc.start()
        generate(side, side, 0, tileset=tileset)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        figures.append(Figure(
            f"{label} peak memory", f"{peak:.0f} MB",
            f"<= {memory_target:.0f} MB" if memory_target else "",
            None if memory_target is None else peak <= memory_target,
        ))
    return figures
