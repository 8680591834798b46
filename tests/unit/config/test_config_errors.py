"""Every way a config file can be wrong must end as one exact, one-line ConfigError.

The messages are what a person editing the YAML reads, so these tests pin
their text down completely, including the file path and the field path.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import main
from config import (
    CONFIG_DIR,
    ConfigError,
    load_agents,
    load_config,
    load_recipes,
    load_settings,
    load_terrain,
)
from services.command_errors import EXIT_USAGE
from tests.integration.hostile import (
    DEADLINE,
    assert_unharmed,
    hearth,
    no_tracebacks,  # noqa: F401 - a fixture, used below
    one_line,
    snapshot,
    within,
)

TERRAIN = yaml.safe_load((CONFIG_DIR / "terrain.yaml").read_text(encoding="utf-8"))
AGENT = {"name": "Ember", "model_id": "claude-sonnet-4-5", "personality": "Curious."}
WORK = {"name": "plank", "action": "work", "inputs": ["wood"], "technique": "split"}
COMBINE = {"name": "torch", "action": "combine", "inputs": ["stick", "fiber"]}
ALL_TERRAINS = "water, coast, sand, grass, forest, hill, stone"


def _terrain(**changes: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The shipped terrain document with one terrain edited (or removed)."""
    data = copy.deepcopy(TERRAIN)
    for name, change in changes.items():
        change(data["terrains"][name])
    return data


def _without(name: str) -> dict[str, Any]:
    data = copy.deepcopy(TERRAIN)
    del data["terrains"][name]
    return data


def _renamed(old: str, new: str) -> dict[str, Any]:
    data = copy.deepcopy(TERRAIN)
    data["terrains"][new] = data["terrains"].pop(old)
    return data


def _agents(*agents: dict[str, Any]) -> dict[str, Any]:
    return {"agents": list(agents)}


def _recipes(*recipes: dict[str, Any]) -> dict[str, Any]:
    return {"recipes": list(recipes)}


CASES = [
    pytest.param(
        load_settings,
        "world:\n  width: 100\n  height: : 5\n",
        ":3:11: mapping values are not allowed here",
        id="yaml-syntax-line-number",
    ),
    pytest.param(
        load_settings,
        "a: 1\nb: [1, 2\nc: 3\n",
        ":3:2: expected ',' or ']', but got ':' (while parsing a flow sequence)",
        id="yaml-unclosed-flow",
    ),
    pytest.param(
        load_settings,
        "world:\n  width: 100\nworld:\n  height: 100\n",
        ":3:1: duplicate key 'world'",
        id="yaml-duplicate-key",
    ),
    pytest.param(
        load_settings,
        "- world\n- vision\n",
        "expected a mapping at the top level, got a list",
        id="top-level-list",
    ),
    pytest.param(
        load_settings,
        "just words\n",
        "expected a mapping at the top level, got a string",
        id="top-level-string",
    ),
    pytest.param(
        load_settings,
        "world:\n  widht: 100\n",
        ":2:3: world.widht: unknown key; did you mean 'width'?",
        id="settings-typo",
    ),
    pytest.param(
        load_settings,
        "world:\n  colour: blue\n",
        ":2:3: world.colour: unknown key; expected one of: width, height, seed",
        id="settings-unknown-key",
    ),
    pytest.param(
        load_settings,
        "world:\n  width: 5\n",
        "world.width: Input should be greater than or equal to 10",
        id="width-too-small",
    ),
    pytest.param(
        load_settings,
        "world:\n  width: 6000\n",
        "world.width: Input should be less than or equal to 5000",
        id="width-too-large",
    ),
    pytest.param(
        load_settings,
        "world:\n  width: wide\n",
        "world.width: Input should be a valid integer",
        id="string-for-int",
    ),
    pytest.param(
        load_settings,
        "world:\n  width: '100'\n  height: 3\n  seed: x\n",
        "world.width: Input should be a valid integer (and 2 more problems)",
        id="several-problems",
    ),
    pytest.param(
        load_settings,
        "placement:\n  min_spacing: 50\n  max_spacing: 40\n",
        "placement: max_spacing (40) must be at least min_spacing (50)",
        id="max-spacing-below-min",
    ),
    pytest.param(
        load_settings,
        "storage:\n  synchronous: normal\n",
        "storage.synchronous: Input should be 'NORMAL' or 'FULL'",
        id="synchronous-case",
    ),
    pytest.param(
        load_agents,
        _agents(AGENT, {**AGENT, "name": "9lives"}),
        "agents.1.name: invalid agent name '9lives': use 1-32 characters, a letter first, "
        "then letters, digits, '_' or '-'",
        id="invalid-agent-name",
    ),
    pytest.param(
        load_agents,
        _agents(AGENT, {**AGENT, "name": "ember"}),
        "agents: duplicate agent name 'ember': 'Ember' already exists "
        "(names must differ ignoring case)",
        id="duplicate-agent-name",
    ),
    pytest.param(
        load_agents,
        _agents(),
        "agents: at least one agent is required",
        id="no-agents",
    ),
    pytest.param(load_agents, "", "agents: Field required", id="empty-agents-file"),
    pytest.param(
        load_agents,
        _agents({**AGENT, "personality": "   "}),
        "agents.0.personality: String should have at least 1 character",
        id="blank-personality",
    ),
    pytest.param(
        load_agents,
        _agents({**AGENT, "color": "red"}),
        "agents.0.color: color must be a hex colour like '#e07a5f', got 'red'",
        id="bad-color",
    ),
    pytest.param(
        load_recipes,
        _recipes({**WORK, "technique": "smash"}),
        "recipes.0.technique: Input should be 'split', 'break', 'strip', 'shape', 'hollow', "
        "'carve', 'weave', 'flatten', 'grind' or 'twist'",
        id="unknown-technique",
    ),
    pytest.param(
        load_recipes,
        _recipes(COMBINE, {k: v for k, v in WORK.items() if k != "technique"}),
        "recipes.1: recipe 'plank': a work recipe needs a technique",
        id="work-without-technique",
    ),
    pytest.param(
        load_recipes,
        _recipes({**WORK, "inputs": ["wood", "stone"]}),
        "recipes.0: recipe 'plank': a work recipe needs exactly 1 input, got 2",
        id="work-two-inputs",
    ),
    pytest.param(
        load_recipes,
        _recipes({"name": "x", "action": "apply", "inputs": ["a", "b", "c"]}),
        "recipes.0: recipe 'x': an apply recipe needs exactly 2 inputs [tool, target], got 3",
        id="apply-three-inputs",
    ),
    pytest.param(
        load_recipes,
        _recipes({**COMBINE, "inputs": ["stick"]}),
        "recipes.0: recipe 'torch': a combine recipe needs at least 2 inputs, got 1",
        id="combine-one-input",
    ),
    pytest.param(
        load_recipes,
        _recipes({**COMBINE, "technique": "twist"}),
        "recipes.0: recipe 'torch': only work recipes take a technique, not combine",
        id="combine-with-technique",
    ),
    pytest.param(
        load_recipes,
        _recipes({**WORK, "name": "Plank"}),
        "recipes.0.name: 'Plank' is not a lowercase snake_case name (like 'clay_brick')",
        id="recipe-name-case",
    ),
    pytest.param(
        load_recipes,
        _recipes(WORK, COMBINE, {**WORK, "name": "board"}),
        "recipes: recipes 'plank' and 'board' both work [wood] with split",
        id="duplicate-recipe",
    ),
    pytest.param(
        load_recipes,
        _recipes(COMBINE, {**COMBINE, "name": "brand", "inputs": ["fiber", "stick"]}),
        "recipes: recipes 'torch' and 'brand' both combine [fiber, stick]",
        id="duplicate-recipe-reordered-inputs",
    ),
    pytest.param(
        load_terrain,
        _without("hill"),
        f"terrains: missing terrain 'hill' (expected exactly: {ALL_TERRAINS})",
        id="terrain-missing",
    ),
    pytest.param(
        load_terrain,
        _renamed("hill", "lava"),
        "terrains: unknown terrain 'lava'; missing terrain 'hill' "
        f"(expected exactly: {ALL_TERRAINS})",
        id="terrain-unknown",
    ),
    pytest.param(
        load_terrain,
        _terrain(sand=lambda t: t.update(ascii="::")),
        "terrains.sand.ascii: ascii must be exactly one visible ASCII character, got '::'",
        id="terrain-ascii-two-chars",
    ),
    pytest.param(
        load_terrain,
        _terrain(sand=lambda t: t.update(ascii=".")),
        "terrains: grass and sand both use ascii '.'",
        id="terrain-ascii-shared",
    ),
    pytest.param(
        load_terrain,
        _terrain(grass=lambda t: t.update(target_share=0.5)),
        "terrains: target_share values must sum to 1.0, got 1.100",
        id="terrain-shares-sum",
    ),
    pytest.param(
        load_terrain,
        _terrain(grass=lambda t: t.update(emojii="x")),
        ":21:5: terrains.grass.emojii: unknown key; did you mean 'emoji'?",
        id="terrain-typo",
    ),
    pytest.param(
        load_settings,
        b"world:\n  width: 100 # caf\xe9\n",
        ":2:19: not valid UTF-8 (byte 0xe9)",
        id="invalid-utf8",
    ),
    pytest.param(
        load_settings,
        "a: 1\nb: \x07\n",
        ":2:4: character #x0007 is not allowed in YAML",
        id="control-character",
    ),
]


def _write(path: Path, content: str | bytes | dict[str, Any]) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, dict):
        path.write_text(yaml.safe_dump(content, allow_unicode=True), encoding="utf-8")
    else:
        path.write_text(content, encoding="utf-8")


@pytest.mark.parametrize(("loader", "content", "expected"), CASES)
def test_malformed_file_gives_one_exact_line(
    tmp_path: Path, loader: Callable[[Path], Any], content: Any, expected: str
) -> None:
    path = tmp_path / "broken.yaml"
    _write(path, content)
    with pytest.raises(ConfigError) as caught:
        loader(path)
    message = str(caught.value)
    assert message == said(path, expected)
    assert "\n" not in message
    assert caught.value.path == path


def said(path: Path, expected: str) -> str:
    """The whole line: `PATH: problem`, or `PATH:LINE:COL: problem` for an expected text
    that begins with its place (`:3:11: ...`)."""
    return f"{path}{expected}" if expected.startswith(":") else f"{path}: {expected}"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "settings.yaml"
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(caught.value) == f"{path}: file not found"
    assert caught.value.location is None
    assert caught.value.problem == "file not found"


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a directory, not a file"


def test_path_is_reported_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("settings.yaml").write_text("world:\n  width: 5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(Path("settings.yaml"))
    assert str(caught.value) == (
        "settings.yaml: world.width: Input should be greater than or equal to 10"
    )
    assert caught.value.location == "world.width"


def test_yaml_error_location_is_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("world:\n  width: 100\n  height: : 5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert (caught.value.line, caught.value.column, caught.value.location) == (3, 11, None)


def test_newlines_in_problems_are_collapsed() -> None:
    err = ConfigError(Path("a.yaml"), "first\n  second\r\nthird", "x.\ny")
    assert str(err) == "a.yaml: x. y: first second third"


def test_config_error_survives_pickling() -> None:
    err = ConfigError(Path("a.yaml"), "bad", "world.width")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err)


def test_unreachable_recipe_is_reported_by_load_config(tmp_path: Path) -> None:
    for name in ("settings.yaml", "agents.yaml", "terrain.yaml", "landmarks.yaml"):
        (tmp_path / name).write_bytes((CONFIG_DIR / name).read_bytes())
    fiber = {"name": "fiber", "action": "work", "inputs": ["grass"], "technique": "strip"}
    typo = {**COMBINE, "inputs": ["stik", "fiber"]}
    _write(tmp_path / "recipes.yaml", _recipes(WORK, fiber, typo))
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'recipes.yaml'}: recipes.2: recipe 'torch' can never be made: "
        "nothing gathers or makes 'stik'"
    )


def test_load_config_names_the_failing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'settings.yaml'}: file not found"


# -- absurd numbers (issue 26) ---------------------------------------------------------
#
# Every number a run adds to a tick, hands to SQLite or numpy, waits on or sums has a
# bound: past it a run overflowed, spun, waited for ever or logged a traceback a tick.
# Each case is one line from the loader and, through `hearth`, one line and exit 2 with
# the world in the data folder untouched.

BIG = 10**30
"""Far past a 64-bit integer (SQLite's and numpy's)."""


def _settings(dotted: str, value: Any) -> tuple[str, dict[str, Any]]:
    document: dict[str, Any] = {}
    *sections, key = dotted.split(".")
    here = document
    for section in sections:
        here = here.setdefault(section, {})
    here[key] = value
    return "settings.yaml", document


def _one_recipe(**changes: Any) -> tuple[str, dict[str, Any]]:
    return "recipes.yaml", _recipes({**WORK, **changes})


def _terrain_file(terrain: str, key: str, value: float) -> tuple[str, dict[str, Any]]:
    data = copy.deepcopy(TERRAIN)
    data["terrains"][terrain][key] = value
    return "terrain.yaml", data


ABSURD = [  # (file name and document, words the line names, what it says)
    pytest.param(_settings("gardener.poll_seconds", 1e-9), "poll_seconds",
                 "greater than or equal to 0.1", id="gardener polls every nanosecond"),
    pytest.param(_settings("gardener.every_minutes", 1e-9), "every_minutes",
                 "greater than or equal to 0.1", id="gardener cycles every nanosecond"),
    pytest.param(_settings("gardener.every_minutes", math.inf), "every_minutes",
                 "finite number", id="gardener every .inf minutes"),
    pytest.param(_settings("gardener.every_minutes", 1e300), "every_minutes",
                 "less than or equal to 525600", id="gardener every 1e300 minutes"),
    pytest.param(_settings("time.ticks_per_day", BIG), "ticks_per_day",
                 "less than or equal to 1440", id="clock that never moves"),
    pytest.param(_settings("scheduling.max_concurrent_clusters", BIG),
                 "max_concurrent_clusters", "less than or equal to 1000", id="concurrency"),
    pytest.param(_settings("scheduling.max_actions_per_turn", BIG), "max_actions_per_turn",
                 "less than or equal to 1000", id="actions per turn"),
    pytest.param(_settings("scheduling.min_sleep_ticks", BIG), "min_sleep_ticks",
                 "less than or equal to 1000000", id="sleep for ever"),
    pytest.param(_settings("scheduling.commit_batch_turns", BIG), "commit_batch_turns",
                 "less than or equal to 100000", id="commit batch"),
    pytest.param(_settings("scheduling.commit_max_delay_ms", 10**12), "commit_max_delay_ms",
                 "less than or equal to 60000", id="commit waits for ever"),
    pytest.param(_settings("gathering.regrow_ticks", BIG), "regrow_ticks",
                 "less than or equal to 1000000", id="regrowth overflows numpy"),
    pytest.param(_settings("storage.snapshot_every_ticks", BIG), "snapshot_every_ticks",
                 "less than or equal to 1000000", id="snapshot interval"),
    pytest.param(_settings("storage.lock_patience_seconds", math.nan),
                 "lock_patience_seconds", "finite number", id="lock patience .nan"),
    pytest.param(_settings("gardener.every_ticks", BIG), "every_ticks",
                 "less than or equal to 1000000", id="gardener tick interval"),
    pytest.param(_settings("gardener.window_ticks", BIG), "window_ticks",
                 "less than or equal to 1000000", id="gardener window"),
    pytest.param(_settings("gardener.budget_per_run", math.inf), "budget_per_run",
                 "finite number", id="gardener budget .inf"),
    pytest.param(_settings("gardener.caps.weather_every_ticks", BIG), "weather_every_ticks",
                 "less than or equal to 1000000", id="gardener weather cap"),
    pytest.param(_settings("gardener.caps.area_every_ticks", BIG), "area_every_ticks",
                 "less than or equal to 1000000", id="gardener area cap"),
    pytest.param(_settings("claude.budgets.per_run", math.nan), "per_run",
                 "finite number", id="budget .nan"),
    pytest.param(_settings("weather.weights", {"clear": math.inf}), "weights",
                 "finite number", id="weather weight .inf"),
    pytest.param(_settings("weather.weights", {"clear": 1e308, "cloudy": 1e308}), "weights",
                 "from 0 to 1000", id="weather weights summing to inf"),
    pytest.param(_terrain_file("grass", "weight", 1e308), "weight",
                 "less than or equal to 1000", id="terrain weight"),
    pytest.param(_terrain_file("grass", "self_affinity", math.inf), "self_affinity",
                 "finite number", id="terrain self_affinity .inf"),
    pytest.param(_one_recipe(output_quantity=BIG), "output_quantity",
                 "less than or equal to 1000", id="recipe output overflows"),
]
LOADERS = {"settings.yaml": load_settings, "terrain.yaml": load_terrain,
           "recipes.yaml": load_recipes}


@pytest.mark.hostile
@pytest.mark.parametrize(("file", "names", "says"), ABSURD)
def test_absurd_numbers_are_refused_in_a_line(
    tmp_path: Path, file: tuple[str, dict[str, Any]], names: str, says: str
) -> None:
    name, document = file
    path = tmp_path / name
    _write(path, document)
    with pytest.raises(ConfigError) as caught:
        LOADERS[name](path)
    message = str(caught.value)
    assert says in message and names in message, message
    assert "\n" not in message


@pytest.fixture(scope="module")
def a_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small world (data/ and agents/) that no case may change."""
    where = tmp_path_factory.mktemp("world")
    made = hearth(where, "--init", "--seed", "3", "--size", "30x30", "--agents", "2")
    assert made.returncode == 0, made.stderr
    return where


@pytest.mark.hostile
@pytest.mark.usefixtures("no_tracebacks")
@pytest.mark.parametrize(("file", "names", "says"), ABSURD)
def test_absurd_numbers_stop_hearth_in_a_line_before_it_touches_the_world(
    tmp_path: Path, a_world: Path, capsys: pytest.CaptureFixture[str],
    file: tuple[str, dict[str, Any]], names: str, says: str,
) -> None:
    """Through `hearth --run`: one line, exit 2 (as for every config error), no traceback,
    nothing in the data folder or the homes changed, world.db whole, no wait."""
    name, document = file
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    for shipped in CONFIG_DIR.glob("*.yaml"):
        (config_dir / shipped.name).write_bytes(shipped.read_bytes())
    _write(config_dir / name, document)
    data, agents = a_world / "data", a_world / "agents"
    before = {folder: snapshot(folder) for folder in (data, agents)}
    capsys.readouterr()
    code = within(DEADLINE, lambda: main.main([
        "--config-dir", str(config_dir), "--data-dir", str(data), "--agents-dir", str(agents),
        "--run", "1", "--mind", "offline", "--quiet"]))
    printed = capsys.readouterr()
    assert code == EXIT_USAGE
    assert printed.out == ""
    line = one_line(printed.err)
    assert line.startswith("hearth: config error: ") and says in line and names in line
    assert_unharmed(before[agents], agents, data / "world.db", printed.out + printed.err)
    assert_unharmed(before[data], data)
