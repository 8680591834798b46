"""The shape of Hearth's configuration files, as pydantic models.

Every model forbids unknown keys and is frozen: a misspelt key in a YAML file
must be an error rather than a silently ignored setting, and a loaded
configuration is shared by the whole program, so nobody may mutate it.

Numbers and booleans are strict: YAML already gives them their types, so a
quoted "500" or a `yes` where a number belongs is a mistake worth reporting,
not something to coerce.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)

from config.base import NonBlankStr, StrictBool, StrictFloat, StrictInt, _Model
from config.claude import ClaudeSettings, EffortName
from core.constants import DEFAULT_VISION_RADIUS, NIGHT_VISION_MODIFIER
from core.gardener import Caps, Thresholds
from core.terrain import Terrain, Weather
from core.types import agent_name

_SNAKE_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
_COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")

MAX_TICKS = 1_000_000
"""The longest any setting counted in ticks may be (over a century at 24 a day): ticks
added to it stay far from a 64-bit integer's end, in SQLite and numpy alike."""
MAX_WEIGHT = 1000.0
"""The largest relative weight (terrain, weather): sums of them stay finite."""


def _snake_case(raw: str) -> str:
    """Item types are identifiers that agents type, so keep them uniform."""
    if not _SNAKE_RE.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a lowercase snake_case name (like 'clay_brick')")
    return raw


ItemName = Annotated[str, AfterValidator(_snake_case)]


# --------------------------------------------------------------------------- settings


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

    @field_validator("*", mode="before")
    @classmethod
    def _empty_section_means_defaults(cls, value: Any) -> Any:
        """A section whose keys are all commented out parses as null: use defaults."""
        return {} if value is None else value


# --------------------------------------------------------------------------- agents


def _color(raw: str) -> str:
    if not _COLOR_RE.fullmatch(raw):
        raise ValueError(f"color must be a hex colour like '#e07a5f', got {raw!r}")
    return raw


def _http_url(raw: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", raw):
        raise ValueError(f"must be an http:// or https:// address, got {raw!r}")
    return raw.rstrip("/")


AnyHttpUrlStr = Annotated[str, AfterValidator(_http_url)]


class AgentConfig(_Model):
    name: Annotated[str, AfterValidator(agent_name)]
    model_id: NonBlankStr
    personality: NonBlankStr
    color: Annotated[str, AfterValidator(_color)] | None = None
    mind: Literal["auto", "offline", "claude", "local"] = "auto"
    """Who speaks for the agent: Claude, the offline mind, Claude when a key is set, or a
    model behind an OpenAI-compatible endpoint (`base_url`)."""
    effort: EffortName | None = None
    """How hard this agent's model thinks (5.x models); unset: settings.yaml's
    `claude.effort`."""
    base_url: AnyHttpUrlStr | None = None
    """For `mind: local`: the endpoint, like http://localhost:11434/v1 (Ollama)."""
    api_key_env: NonBlankStr | None = None
    """For `mind: local`: the environment variable holding the endpoint's key, if it needs
    one (the key itself never goes in a file)."""

    @model_validator(mode="after")
    def _local_needs_an_endpoint(self) -> AgentConfig:
        if self.mind == "local" and self.base_url is None:
            raise ValueError("mind: local needs base_url (the OpenAI-compatible endpoint, "
                             "like http://localhost:11434/v1)")
        if self.mind != "local" and (self.base_url or self.api_key_env):
            raise ValueError("base_url and api_key_env go with mind: local")
        return self


class AgentsConfig(_Model):
    """agents.yaml: who lives in the world."""

    agents: list[AgentConfig]

    @field_validator("agents")
    @classmethod
    def _unique_and_present(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        if not agents:
            raise ValueError("at least one agent is required")
        seen: dict[str, str] = {}
        for agent in agents:
            # Names become folder names, and some file systems ignore case.
            key = agent.name.casefold()
            if key in seen:
                raise ValueError(
                    f"duplicate agent name {agent.name!r}: {seen[key]!r} already exists "
                    "(names must differ ignoring case)"
                )
            seen[key] = agent.name
        return agents


# --------------------------------------------------------------------------- recipes

Technique = Literal[
    "split", "break", "strip", "shape", "hollow", "carve", "weave", "flatten", "grind", "twist"
]
Action = Literal["combine", "work", "apply"]


class Recipe(_Model):
    """One way to make an item.

    combine: put two or more items together; work: shape one item by hand with
    a technique; apply: use a tool (first input) on a target (second input).
    """

    name: ItemName
    action: Action
    inputs: list[ItemName]
    technique: Technique | None = None
    output_quantity: StrictInt = Field(1, ge=1, le=1000)
    """How many one making gives (at most 1,000: counts stay far from any integer's end)."""
    output_stackable: StrictBool = True
    properties: list[str] = Field(default_factory=list)
    discoveries: list[str] = Field(default_factory=list)
    description: str = ""

    @model_validator(mode="after")
    def _inputs_fit_action(self) -> Recipe:
        n = len(self.inputs)
        if self.action == "combine" and n < 2:
            problem = f"a combine recipe needs at least 2 inputs, got {n}"
        elif self.action == "work" and n != 1:
            problem = f"a work recipe needs exactly 1 input, got {n}"
        elif self.action == "apply" and n != 2:
            problem = f"an apply recipe needs exactly 2 inputs [tool, target], got {n}"
        elif self.action == "work" and self.technique is None:
            problem = "a work recipe needs a technique"
        elif self.action != "work" and self.technique is not None:
            problem = f"only work recipes take a technique, not {self.action}"
        else:
            return self
        raise ValueError(f"recipe {self.name!r}: {problem}")

    @property
    def key(self) -> tuple[str, tuple[str, ...], str | None]:
        """What the player does: two recipes with the same key would be ambiguous."""
        return (self.action, tuple(sorted(self.inputs)), self.technique)


class RecipeBook(_Model):
    """recipes.yaml: everything that can be made."""

    recipes: list[Recipe]

    @field_validator("recipes")
    @classmethod
    def _no_ambiguous_recipes(cls, recipes: list[Recipe]) -> list[Recipe]:
        seen: dict[tuple[str, tuple[str, ...], str | None], str] = {}
        for recipe in recipes:
            if recipe.key in seen:
                how = f" with {recipe.technique}" if recipe.technique else ""
                raise ValueError(
                    f"recipes {seen[recipe.key]!r} and {recipe.name!r} both {recipe.action} "
                    f"[{', '.join(recipe.inputs)}]{how}"
                )
            seen[recipe.key] = recipe.name
        return recipes

    def unreachable(self, gatherable: set[str]) -> list[tuple[int, Recipe, list[str]]]:
        """Recipes that can never be made starting from the gatherable resources.

        Returns (index, recipe, missing inputs) so the caller can point at the
        offending entry. An empty list means the recipe graph is closed.
        """
        available = set(gatherable)
        pending = list(enumerate(self.recipes))
        progress = True
        while pending and progress:
            progress = False
            for entry in list(pending):
                if set(entry[1].inputs) <= available:
                    available.add(entry[1].name)
                    pending.remove(entry)
                    progress = True
        return [(i, r, sorted(set(r.inputs) - available)) for i, r in pending]


# --------------------------------------------------------------------------- terrain


def _one_visible_ascii(raw: str) -> str:
    """Maps are drawn one character per cell; a blank would hide the terrain."""
    if len(raw) != 1 or not ("!" <= raw <= "~"):
        raise ValueError(f"ascii must be exactly one visible ASCII character, got {raw!r}")
    return raw


class TerrainSpec(_Model):
    passable: StrictBool
    gather: ItemName | None = None
    emoji: NonBlankStr
    ascii: Annotated[str, AfterValidator(_one_visible_ascii)]
    weight: StrictFloat = Field(gt=0, le=MAX_WEIGHT)
    self_affinity: StrictFloat = Field(1.0, gt=0, le=MAX_WEIGHT)
    target_share: StrictFloat = Field(gt=0, lt=1)


class TerrainConfig(_Model):
    """terrain.yaml: the gameplay side of each terrain kind."""

    terrains: dict[Terrain, TerrainSpec]

    @field_validator("terrains", mode="before")
    @classmethod
    def _exactly_the_known_terrains(cls, value: Any) -> Any:
        """Name the stray or missing kinds, rather than pydantic's generic enum error."""
        if not isinstance(value, dict):
            return value
        known = [t.value for t in Terrain]
        unknown = [str(k) for k in value if k not in known]
        missing = [t for t in known if t not in value]
        problems = []
        for label, names in (("unknown", unknown), ("missing", missing)):
            if names:
                noun = "terrain" if len(names) == 1 else "terrains"
                problems.append(f"{label} {noun} {', '.join(map(repr, names))}")
        if problems:
            raise ValueError(f"{'; '.join(problems)} (expected exactly: {', '.join(known)})")
        return value

    @field_validator("terrains")
    @classmethod
    def _shares_and_symbols(cls, terrains: dict[Terrain, TerrainSpec]) -> dict:
        total = sum(spec.target_share for spec in terrains.values())
        if abs(total - 1.0) > 0.01:
            raise ValueError(f"target_share values must sum to 1.0, got {total:.3f}")
        owners: dict[str, Terrain] = {}
        for terrain, spec in terrains.items():
            if spec.ascii in owners:
                raise ValueError(
                    f"{owners[spec.ascii].value} and {terrain.value} both use ascii {spec.ascii!r}"
                )
            owners[spec.ascii] = terrain
        return terrains

    @property
    def gatherable(self) -> set[str]:
        """Every resource some terrain yields: the roots of the recipe graph."""
        return {spec.gather for spec in self.terrains.values() if spec.gather}


# --------------------------------------------------------------------------- landmarks

_TERRAIN_NAMES = ", ".join(t.value for t in Terrain)


def _terrain_name(raw: Any) -> Any:
    """Name the valid terrains, rather than pydantic's generic enum error."""
    if isinstance(raw, str) and raw not in {t.value for t in Terrain}:
        raise ValueError(f"unknown terrain {raw!r} (expected one of: {_TERRAIN_NAMES})")
    return raw


TerrainName = Annotated[Terrain, BeforeValidator(_terrain_name)]


def _no_repeats(terrains: list[Terrain]) -> list[Terrain]:
    seen: set[Terrain] = set()
    for terrain in terrains:
        if terrain in seen:
            raise ValueError(f"terrain {terrain.value!r} is listed twice")
        seen.add(terrain)
    return terrains


class LandmarkSpec(_Model):
    """One kind of landmark: what it is called and where it may stand."""

    name: NonBlankStr
    description: NonBlankStr
    terrains: Annotated[list[TerrainName], AfterValidator(_no_repeats)]
    """Where it may stand: at least one terrain."""
    near: Annotated[list[TerrainName], AfterValidator(_no_repeats)] = Field(default_factory=list)
    """If not empty, one of these must be among the 8 cells around it."""
    count: StrictInt = Field(1, ge=0, le=20)

    @field_validator("terrains")
    @classmethod
    def _at_least_one(cls, terrains: list[Terrain]) -> list[Terrain]:
        if not terrains:
            raise ValueError(f"at least one terrain is required (from: {_TERRAIN_NAMES})")
        return terrains


class LandmarksConfig(_Model):
    """landmarks.yaml: the special places a new world is born with, keyed by kind."""

    landmarks: dict[str, LandmarkSpec]

    @field_validator("landmarks", mode="before")
    @classmethod
    def _kinds_are_snake_case(cls, value: Any) -> Any:
        """A section whose entries are all commented out parses as null: no landmarks."""
        if value is None:
            return {}
        if isinstance(value, list):
            raise ValueError(
                "expected a mapping from each kind (like 'spring') to its entry, got a list"
            )
        if isinstance(value, dict):
            for kind in value:
                if not isinstance(kind, str) or not _SNAKE_RE.fullmatch(kind):
                    raise ValueError(
                        f"landmark kind {kind!r} is not a lowercase snake_case name "
                        "(like 'old_tree')"
                    )
        return value

    @field_validator("landmarks")
    @classmethod
    def _distinct_names(cls, landmarks: dict[str, LandmarkSpec]) -> dict[str, LandmarkSpec]:
        seen: dict[str, str] = {}
        for kind, spec in landmarks.items():
            key = spec.name.casefold()
            if key in seen:
                raise ValueError(
                    f"landmarks {seen[key]!r} and {kind!r} are both called {spec.name!r} "
                    "(names must differ ignoring case)"
                )
            seen[key] = kind
        return landmarks
