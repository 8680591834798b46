"""Run benchmarks by name, or all of them, and print their figures as a table."""

from __future__ import annotations

import os

# As main.py does, before numpy loads: measure the configuration Hearth runs in.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import Figure  # noqa: E402

BENCHES: dict[str, str] = {
    "generation": "bench.generation",
    "init": "bench.init_world",
    "regions": "bench.regions_placement",
    "pathfinding": "bench.pathfinding",
    "actions": "bench.actions",
    "cells": "bench.cells_roundtrip",
    "engine": "bench.engine_ticks",
    "floor": "bench.engine_floor",
    "parts": "bench.turn_parts",
    "instructions": "bench.instructions",
    "claude": "bench.claude_prompts",
    "parallel": "bench.parallel_turns",
    "perception": "bench.perception",
    "life": "bench.life",
    "observer": "bench.observer",
    "gardener": "bench.gardener",
    "fork": "bench.fork",
    "minds": "bench.minds",
    "limits": "bench.limits",
    "collector": "bench.collector",
}


def table(rows: list[tuple[str, Figure]]) -> str:
    header = ("bench", "figure", "value", "target", "")
    lines = [header] + [
        (bench, f.name, f.value, f.target, {True: "ok", False: "MISSED", None: ""}[f.ok])
        for bench, f in rows
    ]
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    out = []
    for i, row in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benches to run (default: all): {', '.join(BENCHES)}")
    parser.add_argument("--list", action="store_true", help="list the benches and exit")
    args, extra = parser.parse_known_args(argv)
    if extra and args.names != ["limits"]:  # only bench limits takes options of its own
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.list:
        print("\n".join(BENCHES))
        return 0
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    rows: list[tuple[str, Figure]] = []
    for name in args.names or list(BENCHES):
        print(f"== {name}", flush=True)
        module = importlib.import_module(BENCHES[name])
        for figure in module.run(extra) if extra else module.run():
            print(f"   {figure.name}: {figure.value}"
                  + (f"   (target {figure.target})" if figure.target else ""), flush=True)
            rows.append((name, figure))
    print()
    print(table(rows))
    return 0  # a bench reports; it does not fail a build


if __name__ == "__main__":
    sys.exit(main())
