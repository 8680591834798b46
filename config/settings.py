"""settings.yaml: the model of the whole file and of each of its sections but two.

The `claude:` section's models are in config/claude.py and the `gardener:` section's in
config/gardener.py (each a settings group of its own, with its own translation into
core's values); the rest, small sections of plain limits, are here with `Settings`,
which puts every section together.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from config.base import (
    MAX_TICKS,
    MAX_WEIGHT,
    ItemName,
    NonBlankStr,
    StrictFloat,
    StrictInt,
    _Model,
)
from config.claude import ClaudeSettings
from config.gardener import GardenerSettings
from core.constants import DEFAULT_VISION_RADIUS, NIGHT_VISION_MODIFIER
from core.terrain import Weather


class WorldSettings(_Model):
    width: StrictInt = Field(500, ge=10, le=5000)
    height: StrictInt = Field(500, ge=10, le=5000)
    seed: StrictInt | None = None
    """None means: pick a random seed when the world is created (and record it)."""


class VisionSettings(_Model):
    radius: StrictInt = Field(DEFAULT_VISION_RADIUS, ge=1, le=20)
    night_modifier: StrictFloat = Field(NIGHT_VISION_MODIFIER, gt=0, le=1)


class TimeSettings(_Model):
    ticks_per_day: StrictInt = Field(24, ge=4, le=1440)
    """At most one a minute: the clock counts minutes, and would stand still."""
    start_hour: StrictInt = Field(8, ge=0, le=23)


class SchedulingSettings(_Model):
    max_concurrent_clusters: StrictInt = Field(1000, ge=1, le=100_000)
    """Clusters whose turns may overlap in time, where a language model speaks for
    someone (offline turns run one after another). How many requests go at once is
    the endpoint's to say: see `model_requests_start`."""
    model_requests_start: StrictInt = Field(32, ge=1, le=10_000)
    """Requests in flight to one model at one endpoint when a run starts, before any
    answer has told the limits; the number then grows as far as the API's rate-limit
    headers allow, or, where an endpoint sends none (a local server), while answers
    come faster for it (adapters/capacity.py). 32 fits in the lowest tier's 50
    requests a minute, so a first burst is not refused."""
    model_requests_max: StrictInt = Field(1000, ge=1, le=10_000)
    """The most requests in flight to one model at one endpoint, whatever it allows."""
    max_actions_per_turn: StrictInt = Field(8, ge=1, le=1000)
    min_sleep_ticks: StrictInt = Field(2, ge=1, le=MAX_TICKS)
    """A sleeper wakes once it is not night and it has slept at least this long."""
    horizon: StrictInt = Field(40, ge=0, le=500)
    """Landmarks within this many cells stand out on an agent's horizon."""
    commit_batch_turns: StrictInt = Field(256, ge=1, le=100_000)
    """Finished turns written per transaction at most (each turn stays atomic)."""
    commit_max_delay_ms: StrictInt = Field(50, ge=0, le=60_000)
    """A finished turn waits at most this long for others to share its transaction (at
    most a minute: longer is a run that seems to hang)."""

    @model_validator(mode="after")
    def _start_within_max(self) -> SchedulingSettings:
        if self.model_requests_start > self.model_requests_max:
            raise ValueError(
                f"model_requests_start ({self.model_requests_start}) must not be above "
                f"model_requests_max ({self.model_requests_max})")
        return self


class WeatherSettings(_Model):
    change_chance: StrictFloat = Field(0.08, ge=0, le=1)
    """Chance per tick that the weather changes."""
    weights: dict[Weather, StrictFloat] = Field(
        default_factory=lambda: {
            Weather.CLEAR: 5.0, Weather.CLOUDY: 3.0, Weather.RAINY: 2.0, Weather.FOGGY: 1.0,
        }
    )
    """Relative chance of each weather when it changes (0 = never)."""

    @model_validator(mode="after")
    def _some_weather(self) -> WeatherSettings:
        if any(w < 0 or w > MAX_WEIGHT for w in self.weights.values()):
            raise ValueError(f"weather weights must be from 0 to {MAX_WEIGHT:g}")
        if not any(w > 0 for w in self.weights.values()):
            raise ValueError("at least one weather needs a weight above 0")
        return self


class PlacementSettings(_Model):
    min_spacing: StrictInt = Field(30, ge=1)
    max_spacing: StrictInt = 60

    @model_validator(mode="after")
    def _spacing_ordered(self) -> PlacementSettings:
        if self.max_spacing < self.min_spacing:
            raise ValueError(
                f"max_spacing ({self.max_spacing}) must be at least min_spacing "
                f"({self.min_spacing})"
            )
        return self


class GatheringSettings(_Model):
    yield_per_gather: StrictInt = Field(1, ge=1, le=100)
    """Units one gather action gives."""
    cell_capacity: StrictInt = Field(5, ge=1, le=1000)
    """Units a cell holds before it is spent."""
    regrow_ticks: StrictInt = Field(24, ge=1, le=MAX_TICKS)
    """Ticks for a spent unit to grow back (24 = one day by default)."""


class BuildingSettings(_Model):
    wall_cost: StrictInt = Field(2, ge=0, le=100)
    """Units of ONE wall material a wall takes (given back when it is removed)."""
    wall_materials: list[ItemName] = Field(
        default_factory=lambda: ["plank", "cobblestone", "clay_brick", "wood", "stone"]
    )
    """What a wall may be made of, in the order an agent's inventory is tried."""
    door_cost: StrictInt = Field(1, ge=0, le=100)
    door_materials: list[ItemName] = Field(default_factory=lambda: ["plank", "wood"])


class StorageSettings(_Model):
    synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    snapshot_every_ticks: StrictInt = Field(100, ge=0, le=MAX_TICKS)
    """0 means never take periodic snapshots."""
    snapshots_keep: StrictInt = Field(5, ge=1)
    lock_patience_seconds: float = Field(60.0, ge=1, le=3600)
    """How long a run waits, saying so, for a lock another program holds on world.db
    before it stops with a line (storage/direct_db.LOCK_PATIENCE)."""


class ObserverSettings(_Model):
    ticks_per_second: float | None = Field(2.0, gt=0, le=1000)
    """The pace the live observer runs the world at, so a person can follow it (`<`, `>`
    and `m` change it as it runs); null: as fast as it goes."""


def _plain_host(host: str) -> str:
    """An IP address or a host name: no scheme, port or path."""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if not _HOST_NAME.fullmatch(host) or host.replace(".", "").isdigit():
        raise ValueError(f"must be an IP address or a host name (no scheme, port or path), "
                         f"not {host!r}")
    return host


_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


class SeatSettings(_Model):
    """Where the world serves its seats (agents with `mind: seat`) over MCP."""

    host: Annotated[NonBlankStr, AfterValidator(_plain_host)] = "127.0.0.1"
    """An address or host name to listen on; anything but the loopback is reachable
    from other machines (a warning says so)."""
    port: StrictInt = Field(8765, ge=1, le=65535)
    turn_seconds: StrictFloat = Field(120.0, ge=1, le=3600)
    """How long a seat's turn may last; past it the turn passes and the world goes on.
    A holder silent this long (not waiting for its turn) lets go of its seat."""


class Settings(_Model):
    """settings.yaml: every section and field is optional."""

    world: WorldSettings = Field(default_factory=WorldSettings)
    vision: VisionSettings = Field(default_factory=VisionSettings)
    time: TimeSettings = Field(default_factory=TimeSettings)
    scheduling: SchedulingSettings = Field(default_factory=SchedulingSettings)
    weather: WeatherSettings = Field(default_factory=WeatherSettings)
    placement: PlacementSettings = Field(default_factory=PlacementSettings)
    gathering: GatheringSettings = Field(default_factory=GatheringSettings)
    building: BuildingSettings = Field(default_factory=BuildingSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    claude: ClaudeSettings = Field(default_factory=ClaudeSettings)
    gardener: GardenerSettings = Field(default_factory=GardenerSettings)
    observer: ObserverSettings = Field(default_factory=ObserverSettings)
    seats: SeatSettings = Field(default_factory=SeatSettings)

    @field_validator("*", mode="before")
    @classmethod
    def _empty_section_means_defaults(cls, value: Any) -> Any:
        """A section whose keys are all commented out parses as null: use defaults."""
        return {} if value is None else value
