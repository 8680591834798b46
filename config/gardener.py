"""settings.yaml's `gardener:` section: when the Gardener looks, what it looks at, the
model it may ask, and the limits the engine holds its changes to.

Thresholds and caps are checked by core's own values (core/gardener/triage.py,
guardrails.py), built here with `to_core`, so the file and the domain cannot disagree
on what is valid.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from config.base import MAX_TICKS, StrictInt, _Model
from config.claude import EffortName
from core.gardener import Caps, Thresholds


class GardenerThresholds(_Model):
    """Where each health measure crosses into WATCH / WARNING (/ CRITICAL); see
    core/gardener/triage.py. Ticks are world ticks (24 to a day by default)."""

    alone_ticks: tuple[StrictInt, StrictInt, StrictInt] = (48, 120, 240)
    failure_share: tuple[float, float] = (0.5, 0.8)
    failure_min_actions: StrictInt = Field(6, ge=1)
    quiet_ticks: tuple[StrictInt, StrictInt] = (72, 168)
    sameness: tuple[float, float] = (0.9, 1.0)
    resources_near: tuple[StrictInt, StrictInt] = (4, 0)
    asleep_share: float = 0.8
    crowd_share: float = 0.5

    @model_validator(mode="after")
    def _ordered(self) -> GardenerThresholds:
        self.to_core()  # the domain's own checks, with its messages
        return self

    def to_core(self) -> Thresholds:
        return Thresholds(**self.model_dump())


class GardenerCaps(_Model):
    """The engine's limits on what the Gardener may change (core/gardener/guardrails.py)."""

    per_cycle: tuple[StrictInt, StrictInt, StrictInt, StrictInt] = (1, 1, 2, 3)
    """Interventions one cycle may have applied at HEALTHY, WATCH, WARNING, CRITICAL."""
    weather_every_ticks: StrictInt = Field(24, ge=0, le=MAX_TICKS)
    area_cells: StrictInt = Field(40, ge=0)
    area_every_ticks: StrictInt = Field(48, ge=0, le=MAX_TICKS)
    event_radius: StrictInt = Field(12, ge=0, le=200)
    event_text_chars: StrictInt = Field(280, ge=1, le=2000)
    regrowth_radius: StrictInt = Field(5, ge=0, le=50)
    reveal_radius: StrictInt = Field(60, ge=0, le=500)

    @model_validator(mode="after")
    def _valid(self) -> GardenerCaps:
        self.to_core()
        return self

    def to_core(self) -> Caps:
        return Caps(**self.model_dump())


class GardenerSettings(_Model):
    """The Gardener (`hearth --gardener`): how often it looks, what it looks at, and
    the model it may ask."""

    every_ticks: StrictInt = Field(24, ge=1, le=MAX_TICKS)
    """A cycle each time the world has moved on this many ticks..."""
    every_minutes: float | None = Field(None, ge=0.1, le=525_600)
    """...or this many minutes have passed, whichever comes first (null: ticks only)."""
    poll_seconds: float = Field(2.0, ge=0.1, le=600)
    """How often the waiting Gardener looks at the world's tick."""
    window_ticks: StrictInt = Field(48, ge=1, le=MAX_TICKS)
    """How far back the health figures look."""
    look_radius: StrictInt = Field(8, ge=1, le=100)
    """Cells around an agent counted for gatherable material."""
    happening_ticks: StrictInt = Field(6, ge=1, le=240)
    """How long agents in range perceive a happening or a revealed landmark."""
    model: str | None = Field("claude-haiku-5-5", min_length=1)
    """The model that decides when ANTHROPIC_API_KEY is set (null: rules always)."""
    max_tokens: StrictInt = Field(4000, ge=64, le=64_000)
    """Room for the model's reply, its thinking included."""
    effort: EffortName | None = "low"
    """How hard it thinks (models that take an effort); null: the model's default."""
    timeout_seconds: float = Field(30.0, gt=0, le=600)
    """One request's limit; it is retried once, then the rules decide this cycle."""
    memory_cycles: StrictInt = Field(5, ge=0, le=50)
    """Past cycles shown to the model with each new one."""
    budget_per_run: float | None = Field(0.50, gt=0)
    """US dollars one `--gardener` run may spend on the model; past it, rules decide."""
    thresholds: GardenerThresholds = Field(default_factory=GardenerThresholds)
    caps: GardenerCaps = Field(default_factory=GardenerCaps)
