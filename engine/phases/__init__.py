"""The phases of a tick, in the order the engine runs them (see DESIGN.md, "The tick")."""

from engine.phases.commit import CommitPhase
from engine.phases.gardener import GardenerPhase
from engine.phases.movement import MovementPhase
from engine.phases.opening import InvitationExpiryPhase, WakePhase, WeatherPhase
from engine.phases.schedule import CheckpointPhase, SchedulePhase
from engine.phases.turns import AgentTurnPhase

__all__ = [
    "AgentTurnPhase",
    "CheckpointPhase",
    "CommitPhase",
    "GardenerPhase",
    "InvitationExpiryPhase",
    "MovementPhase",
    "SchedulePhase",
    "WakePhase",
    "WeatherPhase",
]
