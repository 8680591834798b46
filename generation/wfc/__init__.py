"""Wave Function Collapse over a numpy bitmask wave: tables, propagation, solver, check."""

from generation.wfc.check import AdjacencyViolation, count_violations, verify
from generation.wfc.solver import Solution, SolverFailed, SolveStats, WFCSolver
from generation.wfc.tables import WaveTables

__all__ = [
    "AdjacencyViolation",
    "Solution",
    "SolveStats",
    "SolverFailed",
    "WFCSolver",
    "WaveTables",
    "count_violations",
    "verify",
]
