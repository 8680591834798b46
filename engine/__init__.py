"""The engine: the tick pipeline, its phases, crash-safe commits, and the runner thread."""

from engine.context import TickContext, TurnResult
from engine.engine import HearthEngine
from engine.pipeline import BasePhase, Phase, TickPipeline
from engine.runner import EngineRunner

__all__ = [
    "BasePhase",
    "EngineRunner",
    "HearthEngine",
    "Phase",
    "TickContext",
    "TickPipeline",
    "TurnResult",
]
