"""The Gardener's domain: world health, its triage, interventions and their guardrails.

The Gardener tends the world, never an agent: it reads health figures (who has been
alone, whose actions keep failing, how quiet and how unchanging the world is), sorts
them into a level, and may ask for a gentle change to the world. Everything here is
pure: the figures come from storage, the requests go through the engine, which judges
each one by `guardrails.judge` before it touches anything.
"""

from core.gardener.guardrails import Applied, Caps, Verdict, judge
from core.gardener.health import AgentHealth, HealthFigures
from core.gardener.interventions import (
    KINDS,
    Intervention,
    NoIntervention,
    Regrowth,
    RevealLandmark,
    WeatherChange,
    WorldHappening,
)
from core.gardener.triage import Level, Reason, Thresholds, Triage, triage

__all__ = [
    "KINDS", "AgentHealth", "Applied", "Caps", "HealthFigures", "Intervention", "Level",
    "NoIntervention", "Reason", "Regrowth", "RevealLandmark", "Thresholds", "Triage",
    "Verdict", "WeatherChange", "WorldHappening", "judge", "triage",
]
