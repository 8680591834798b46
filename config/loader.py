"""Reading the YAML files and turning every failure into one readable line.

A person editing settings.yaml should see `settings.yaml: world.width: ...`,
not a pydantic traceback, so every way reading can fail (missing file, bad
bytes, bad YAML, bad schema) ends up as a ConfigError whose text is exactly one
line naming the file, the place in it, and the problem.
"""

from __future__ import annotations

import codecs
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from config.agents import AgentsConfig
from config.landmarks import LandmarksConfig
from config.recipes import RecipeBook
from config.settings import Settings
from config.terrain import TerrainConfig

CONFIG_DIR: Path = Path(__file__).resolve().parent
"""Where the shipped default YAML files live."""

M = TypeVar("M", bound=BaseModel)

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


def _one_line(text: str) -> str:
    return _NEWLINES.sub(" ", text).strip()


class ConfigError(Exception):
    """A configuration file could not be used.

    `location` is "line N" for YAML syntax errors, a dotted field path such as
    "agents.1.name" for schema errors, and None for whole-file problems.
    """

    def __init__(self, path: Path, problem: str, location: str | None = None) -> None:
        super().__init__(path, problem, location)  # keeps the error picklable
        self.path = Path(path)
        self.problem = _one_line(problem)
        self.location = _one_line(location) if location is not None else None

    def __str__(self) -> str:
        where = _one_line(str(self.path))
        if self.location:
            return f"{where}: {self.location}: {self.problem}"
        return f"{where}: {self.problem}"


# --------------------------------------------------------------------------- YAML


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate keys.

    Plain PyYAML keeps the last of two equal keys, so a pasted second `world:`
    section would silently replace the first one.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(path, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(path, "is a directory, not a file") from None
    except PermissionError:
        raise ConfigError(path, "permission denied") from None
    except OSError as err:
        raise ConfigError(path, f"cannot read file: {err.strerror or err}") from err
    raw = raw.removeprefix(codecs.BOM_UTF8)  # tolerate the BOM some editors add
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        byte = raw[err.start]
        raise ConfigError(path, f"not valid UTF-8 (byte 0x{byte:02x} on line {line})") from None


_TYPE_NAMES = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def read_mapping(path: Path) -> dict[str, Any]:
    """Parse a YAML file whose top level must be a mapping; empty means {}."""
    text = _read_text(path)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no arbitrary objects
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        if err.context and err.problem:
            problem = f"{problem} ({err.context})"
        location = f"line {mark.line + 1}" if mark is not None else None
        raise ConfigError(path, problem, location) from None
    except ReaderError as err:
        code = err.character if isinstance(err.character, int) else ord(err.character)
        line = text.count("\n", 0, err.position) + 1
        problem = f"character #x{code:04x} is not allowed in YAML"
        raise ConfigError(path, problem, f"line {line}") from None
    except yaml.YAMLError as err:
        raise ConfigError(path, f"invalid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = _TYPE_NAMES.get(type(data), f"a {type(data).__name__}")
        raise ConfigError(path, f"expected a mapping at the top level, got {kind}")
    return data


# --------------------------------------------------------------------------- schema errors


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as list[Recipe] or X | None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _known_keys(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the mapping that holds loc[-1]."""
    model: type[BaseModel] = root
    for part in loc[:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            continue  # a list index or a dict key: stay on the item's model
        inner = _model_in(field.annotation)
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def _unknown_key_problem(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    known = _known_keys(root, loc)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    if known:
        return f"unknown key; expected one of: {', '.join(known)}"
    return "unknown key"


def _describe(root: type[BaseModel], err: ValidationError) -> tuple[str | None, str]:
    """The location and message of the first problem, with a count of the rest."""
    errors = err.errors(include_url=False)
    first = errors[0]
    loc = tuple(first["loc"])
    if first["type"] == "extra_forbidden" and loc:
        problem = _unknown_key_problem(root, loc)
    elif first["type"] == "value_error" and "error" in first.get("ctx", {}):
        problem = str(first["ctx"]["error"])  # our own text, without "Value error, "
    else:
        problem = first["msg"]
    rest = len(errors) - 1
    if rest:
        problem += f" (and {rest} more problem{'s' if rest > 1 else ''})"
    return (".".join(str(part) for part in loc) or None), problem


def load_model(path: Path, model: type[M]) -> M:
    """Read `path` and validate it as `model`, raising only ConfigError."""
    path = Path(path)
    data = read_mapping(path)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        location, problem = _describe(model, err)
        raise ConfigError(path, problem, location) from err


def load_settings(path: Path) -> Settings:
    return load_model(path, Settings)


def load_agents(path: Path) -> AgentsConfig:
    return load_model(path, AgentsConfig)


def load_recipes(path: Path) -> RecipeBook:
    return load_model(path, RecipeBook)


def load_terrain(path: Path) -> TerrainConfig:
    return load_model(path, TerrainConfig)


def load_landmarks(path: Path) -> LandmarksConfig:
    return load_model(path, LandmarksConfig)


# --------------------------------------------------------------------------- everything


@dataclass(frozen=True)
class HearthConfig:
    settings: Settings
    agents: AgentsConfig
    recipes: RecipeBook
    terrain: TerrainConfig
    landmarks: LandmarksConfig


def load_config(config_dir: Path | None = None) -> HearthConfig:
    """Load the five files of a config folder (the shipped defaults if None).

    Also checks what no single file can: that every recipe can actually be made
    from what the terrain yields, so a typo in an input name is caught here
    rather than discovered by an agent that never manages to craft; and that
    every landmark may stand on some terrain agents can walk on.
    """
    folder = CONFIG_DIR if config_dir is None else Path(config_dir)
    config = HearthConfig(
        settings=load_settings(folder / "settings.yaml"),
        agents=load_agents(folder / "agents.yaml"),
        recipes=load_recipes(folder / "recipes.yaml"),
        terrain=load_terrain(folder / "terrain.yaml"),
        landmarks=load_landmarks(folder / "landmarks.yaml"),
    )
    _check_recipes_reachable(config, folder / "recipes.yaml")
    _check_landmarks_walkable(config, folder / "landmarks.yaml")
    return config


def _check_recipes_reachable(config: HearthConfig, path: Path) -> None:
    unreachable = config.recipes.unreachable(config.terrain.gatherable)
    if not unreachable:
        return
    made = {recipe.name for recipe in config.recipes.recipes}
    # Report a root cause first: an input nothing makes (a typo, usually),
    # rather than a recipe that merely depends on another broken one.
    roots = [entry for entry in unreachable if set(entry[2]) - made]
    index, recipe, missing = (roots or unreachable)[0]
    if roots:
        names = ", ".join(repr(item) for item in missing if item not in made)
        problem = f"recipe {recipe.name!r} can never be made: nothing gathers or makes {names}"
    else:
        names = ", ".join(map(repr, missing))
        problem = f"recipe {recipe.name!r} can never be made: no way to obtain {names}"
    rest = len(unreachable) - 1
    if rest:
        problem += f" (and {rest} more problem{'s' if rest > 1 else ''})"
    raise ConfigError(path, problem, f"recipes.{index}")


def _check_landmarks_walkable(config: HearthConfig, path: Path) -> None:
    """A landmark that may only stand on impassable terrain could never be visited."""
    passable = {kind for kind, spec in config.terrain.terrains.items() if spec.passable}
    stranded = [
        (kind, spec)
        for kind, spec in config.landmarks.landmarks.items()
        if not passable.intersection(spec.terrains)
    ]
    if not stranded:
        return
    kind, spec = stranded[0]
    names = ", ".join(terrain.value for terrain in spec.terrains)
    problem = (
        f"landmark {kind!r} may only stand on impassable terrain ({names}): "
        "nobody could reach it"
    )
    rest = len(stranded) - 1
    if rest:
        problem += f" (and {rest} more problem{'s' if rest > 1 else ''})"
    raise ConfigError(path, problem, f"landmarks.{kind}.terrains")
