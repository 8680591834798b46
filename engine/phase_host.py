"""What a tick's phases need of the engine that runs them: the port they depend on.

The phases (engine/phases/) are built by HearthEngine (engine/engine.py) and call back
into it: the world (`sim`), the committer, the scheduler, the Gardener's stewardship, the
turns themselves. They name this Protocol, not HearthEngine, so the engine imports its
phases and nothing imports it back (DESIGN.md "Layers": no import cycles). HearthEngine is
the one implementation; a phase that needs more of it adds the member here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from config import HearthConfig
    from core.types import AgentName
    from engine.committer import TurnCommitter
    from engine.context import TurnResult
    from engine.stewardship import Stewardship
    from services.scheduler import Scheduler
    from services.simulation import Simulation
    from storage import Storage


class PhaseHost(Protocol):
    """The engine as its phases see it (HearthEngine)."""

    storage: Storage
    config: HearthConfig
    sim: Simulation
    committer: TurnCommitter
    scheduler: Scheduler
    stewardship: Stewardship
    journey_news: dict[str, str]
    """How each journey that ended came to end, for the traveller's next turn."""
    write_behind: bool
    """Leave each tick's last commit in flight while the next tick runs."""
    stop_requested: bool

    def all_answer_at_once(self, names: Iterable[str]) -> bool: ...

    def request_stop(self) -> None: ...

    async def run_agent_turn(self, name: AgentName, tick: int) -> TurnResult | None: ...
