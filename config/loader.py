"""Reading the YAML files and turning every failure into one readable line.

A person editing settings.yaml should see `settings.yaml: world.width: ...`,
not a pydantic traceback, so every way reading can fail (missing file, bad
bytes, bad YAML, bad schema) ends up as a ConfigError whose text is exactly one
line naming the file, the place in it, and the problem. Reading the YAML, and finding
the line a key is on, is config/yaml_read.py: a syntax error, an unknown key and an
unknown model id are named `FILE:LINE:COL:`, as in
`settings.yaml:2:3: world.widht: unknown key; did you mean 'width'?`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from config.agents import AgentsConfig
from config.errors import ConfigError
from config.landmarks import LandmarksConfig
from config.model_ids import unknown_models
from config.recipes import RecipeBook
from config.settings import Settings
from config.terrain import TerrainConfig
from config.yaml_read import mark_of, read_document, run_on_at, runs_on, shorten

CONFIG_DIR: Path = Path(__file__).resolve().parent
"""Where the shipped default YAML files live."""

M = TypeVar("M", bound=BaseModel)

_TYPE_NAMES = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def _read(path: Path) -> tuple[dict[str, Any], yaml.Node | None]:
    """A YAML file whose top level must be a mapping (empty means {}), with its nodes."""
    data, node = read_document(path)
    if data is None:
        return {}, node
    if not isinstance(data, dict):
        kind = _TYPE_NAMES.get(type(data), f"a {type(data).__name__}")
        raise ConfigError(path, f"expected a mapping at the top level, got {kind}")
    return data, node


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


def _and_more(problem: str, rest: int) -> str:
    """A problem, with a count of the others found with it."""
    return problem + (f" (and {rest} more problem{'s' if rest > 1 else ''})" if rest else "")


def _close_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str | None:
    close = difflib.get_close_matches(str(loc[-1]), _known_keys(root, loc), n=1)
    return close[0] if close else None


def _unknown_key_problem(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    close = _close_key(root, loc)
    if close:
        return f"unknown key; did you mean {close!r}?"
    if known := _known_keys(root, loc):
        return f"unknown key; expected one of: {', '.join(known)}"
    return "unknown key"


def _first_problems(root: type[BaseModel], err: ValidationError,
                    node: yaml.Node | None) -> list[dict[str, Any]]:
    """The problems to report, the likely cause first: an unknown key (a misspelt key is
    usually also why a key is missing, so the key it was meant to be is not counted
    again), then a quoted value that ran on over the lines after it (the keys it took in
    are missing too, and not counted either), then the rest."""
    unknown: list[dict[str, Any]] = []
    run_on: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for error in err.errors(include_url=False):
        if error["type"] == "extra_forbidden" and error["loc"]:
            unknown.append(error)
        elif run_on_at(node, error["loc"]) is not None:
            run_on.append(error)
        else:
            rest.append(error)
    meant = {(*e["loc"][:-1], key) for e in unknown if (key := _close_key(root, e["loc"]))}
    swallowed = {e["loc"][:-1] for e in run_on}
    return unknown + run_on + [e for e in rest if e["type"] != "missing" or not (
        e["loc"] in meant or e["loc"][:-1] in swallowed)]


def _describe(root: type[BaseModel], err: ValidationError, node: yaml.Node | None,
              path: Path) -> ConfigError:
    """The first problem as one line, with a count of the rest: an unknown key with the
    line it is on, a value that swallowed the lines after it as the quote to blame."""
    errors = _first_problems(root, err, node)
    first = errors[0]
    loc = tuple(first["loc"])
    where: dict[str, int] = {}
    if first["type"] == "extra_forbidden" and loc:
        problem = _unknown_key_problem(root, loc)
        where = mark_of(node, loc, key=True)
    elif (quote := run_on_at(node, loc)) is not None:
        problem = runs_on(quote.end_mark.line)
        where = mark_of(node, loc)
    elif first["type"] == "value_error" and "error" in first.get("ctx", {}):
        problem = shorten(str(first["ctx"]["error"]))  # our own text, without "Value error, "
    else:
        problem = shorten(first["msg"])
    return ConfigError(path, _and_more(problem, len(errors) - 1),
                       ".".join(str(part) for part in loc) or None, **where)


def load_model(path: Path, model: type[M]) -> M:
    """Read `path` and validate it as `model`, raising only ConfigError."""
    path = Path(path)
    data, node = _read(path)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise _describe(model, err, node, path) from err


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
    every landmark may stand on some terrain agents can walk on; and that every Claude
    model id names a model Hearth knows or is given a price for (config/model_ids.py).
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
    _check_model_ids(config, folder)
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
    raise ConfigError(path, _and_more(problem, len(unreachable) - 1), f"recipes.{index}")


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
    raise ConfigError(path, _and_more(problem, len(stranded) - 1),
                      f"landmarks.{kind}.terrains")


def _check_model_ids(config: HearthConfig, folder: Path) -> None:
    """A model id no Claude model answers to, named at its line in its file (read again:
    this is the rare path, and the nodes of every file are not worth keeping for it)."""
    unknown = unknown_models(config.settings, config.agents)
    if not unknown:
        return
    name, loc, problem = unknown[0]
    node = _read(folder / name)[1]
    if (quote := run_on_at(node, loc)) is not None:
        problem = runs_on(quote.end_mark.line)  # `model_id: "claude-...` took in lines
    raise ConfigError(folder / name, _and_more(problem, len(unknown) - 1),
                      ".".join(map(str, loc)), **mark_of(node, loc))
