"""Benchmarks: scripts that measure Hearth's speed and memory and print the figures.

    python -m bench               run every bench, one table at the end
    python -m bench generation    just one (names: see `python -m bench --list`)

Targets from the issues are printed next to the figures; a bench never fails a
build, it reports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One measured figure: what, its value as text, and the target if there is one."""

    name: str
    value: str
    target: str = ""
    ok: bool | None = None
    """True/False when a target applies, None when the figure is informational."""
