"""landmarks.yaml: the shipped file loads, and every mistake is one exact line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from config import (
    CONFIG_DIR,
    ConfigError,
    HearthConfig,
    LandmarksConfig,
    LandmarkSpec,
    load_config,
    load_landmarks,
)
from core.terrain import Terrain

ALL_TERRAINS = "water, coast, sand, grass, forest, hill, stone"
SPRING = {"name": "the Spring", "description": "Cold water wells up.", "terrains": ["grass"]}


def _landmarks(**entries: dict[str, Any]) -> dict[str, Any]:
    return {"landmarks": entries}


def _spring(**changes: Any) -> dict[str, Any]:
    return _landmarks(spring={**SPRING, **changes})


def _spring_without(key: str) -> dict[str, Any]:
    return _landmarks(spring={k: v for k, v in SPRING.items() if k != key})


@pytest.fixture(scope="module")
def shipped() -> HearthConfig:
    return load_config()


# --------------------------------------------------------------------------- shipped file


def test_shipped_landmarks_load(shipped: HearthConfig) -> None:
    landmarks = shipped.landmarks.landmarks
    assert shipped.landmarks == load_landmarks(CONFIG_DIR / "landmarks.yaml")
    assert 6 <= len(landmarks) <= 12
    assert {"spring", "old_tree", "standing_stone", "cave_mouth"} <= set(landmarks)
    assert landmarks["spring"].name == "the Spring"
    assert landmarks["cave_mouth"].terrains == [Terrain.HILL]
    assert landmarks["cave_mouth"].near == [Terrain.STONE]
    assert any(spec.count > 1 for spec in landmarks.values())


def test_shipped_landmarks_are_described_and_walkable(shipped: HearthConfig) -> None:
    passable = {t for t, spec in shipped.terrain.terrains.items() if spec.passable}
    names = [spec.name.casefold() for spec in shipped.landmarks.landmarks.values()]
    assert len(set(names)) == len(names)
    for spec in shipped.landmarks.landmarks.values():
        assert spec.description.strip() and "\n" not in spec.description
        assert 1 <= spec.count <= 20
        assert passable & set(spec.terrains)


def test_entry_defaults(tmp_path: Path) -> None:
    path = tmp_path / "landmarks.yaml"
    path.write_text(yaml.safe_dump(_spring(name="  the Spring ")), encoding="utf-8")
    spec = load_landmarks(path).landmarks["spring"]
    assert spec == LandmarkSpec(
        name="the Spring", description="Cold water wells up.", terrains=[Terrain.GRASS]
    )
    assert (spec.near, spec.count) == ([], 1)


@pytest.mark.parametrize("text", ["landmarks:\n", "landmarks: {}\n", "landmarks:\n#  x: {}\n"])
def test_an_empty_section_means_no_landmarks(tmp_path: Path, text: str) -> None:
    path = tmp_path / "landmarks.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_landmarks(path) == LandmarksConfig(landmarks={})


def test_file_order_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "landmarks.yaml"
    entries = {kind: {**SPRING, "name": kind} for kind in ("zeta", "alpha", "mid")}
    path.write_text(yaml.safe_dump(_landmarks(**entries), sort_keys=False), encoding="utf-8")
    assert list(load_landmarks(path).landmarks) == ["zeta", "alpha", "mid"]


# --------------------------------------------------------------------------- mistakes

CASES = [
    pytest.param(
        _spring(terrains=["grass", "lava"]),
        f"landmarks.spring.terrains.1: unknown terrain 'lava' (expected one of: {ALL_TERRAINS})",
        id="unknown-terrain",
    ),
    pytest.param(
        _spring(near=["sea"]),
        f"landmarks.spring.near.0: unknown terrain 'sea' (expected one of: {ALL_TERRAINS})",
        id="unknown-near-terrain",
    ),
    pytest.param(_spring_without("name"), "landmarks.spring.name: Field required",
                 id="missing-name"),
    pytest.param(
        _spring(name="   "),
        "landmarks.spring.name: String should have at least 1 character",
        id="blank-name",
    ),
    pytest.param(
        _spring_without("description"),
        "landmarks.spring.description: Field required",
        id="missing-description",
    ),
    pytest.param(
        _spring(count=21),
        "landmarks.spring.count: Input should be less than or equal to 20",
        id="count-too-large",
    ),
    pytest.param(
        _spring(count=-1),
        "landmarks.spring.count: Input should be greater than or equal to 0",
        id="count-negative",
    ),
    pytest.param(
        _spring(count="2"), "landmarks.spring.count: Input should be a valid integer",
        id="count-quoted",
    ),
    pytest.param(
        _spring(neer=["coast"]),
        ":7:5: landmarks.spring.neer: unknown key; did you mean 'near'?",
        id="typo-key",
    ),
    pytest.param(
        _spring(colour="blue"),
        ":7:5: landmarks.spring.colour: unknown key; expected one of: "
        "name, description, terrains, near, count",
        id="unknown-key",
    ),
    pytest.param(
        _spring(terrains=[]),
        f"landmarks.spring.terrains: at least one terrain is required (from: {ALL_TERRAINS})",
        id="empty-terrains",
    ),
    pytest.param(
        _spring_without("terrains"), "landmarks.spring.terrains: Field required",
        id="missing-terrains",
    ),
    pytest.param(
        _spring(terrains=["grass", "sand", "grass"]),
        "landmarks.spring.terrains: terrain 'grass' is listed twice",
        id="repeated-terrain",
    ),
    pytest.param(
        _landmarks(OldTree=SPRING),
        "landmarks: landmark kind 'OldTree' is not a lowercase snake_case name (like 'old_tree')",
        id="kind-not-snake-case",
    ),
    pytest.param(
        _landmarks(**{"old-tree": SPRING}),
        "landmarks: landmark kind 'old-tree' is not a lowercase snake_case name "
        "(like 'old_tree')",
        id="kind-with-dash",
    ),
    pytest.param(
        _landmarks(spring=SPRING, well={**SPRING, "name": "The SPRING"}),
        "landmarks: landmarks 'spring' and 'well' are both called 'The SPRING' "
        "(names must differ ignoring case)",
        id="duplicate-name",
    ),
    pytest.param(
        {"landmarks": [SPRING]},
        "landmarks: expected a mapping from each kind (like 'spring') to its entry, got a list",
        id="list-instead-of-mapping",
    ),
    pytest.param({}, "landmarks: Field required", id="empty-file"),
]


@pytest.mark.parametrize(("content", "expected"), CASES)
def test_malformed_landmarks_give_one_exact_line(
    tmp_path: Path, content: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "landmarks.yaml"
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_landmarks(path)
    message = str(caught.value)
    assert message == (f"{path}{expected}" if expected.startswith(":")  # :LINE:COL: ...
                       else f"{path}: {expected}")
    assert "\n" not in message
    assert caught.value.path == path


# --------------------------------------------------------------------------- with the rest


def _config_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return folder


def test_load_config_reads_landmarks_from_the_folder(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    (folder / "landmarks.yaml").write_text(yaml.safe_dump(_spring(count=3)), encoding="utf-8")
    config = load_config(folder)
    assert list(config.landmarks.landmarks) == ["spring"]
    assert config.landmarks.landmarks["spring"].count == 3


def test_missing_landmarks_file_is_an_error(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    (folder / "landmarks.yaml").unlink()
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value) == f"{folder / 'landmarks.yaml'}: file not found"


def test_load_config_names_the_broken_landmarks_file(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    (folder / "landmarks.yaml").write_text("landmarks:\n  spring: {name: x}\n  : [\n")
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value).startswith(f"{folder / 'landmarks.yaml'}:3:")


def test_a_landmark_only_on_impassable_terrain_is_refused(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    content = _landmarks(spring=SPRING, island={**SPRING, "name": "x", "terrains": ["water"]})
    (folder / "landmarks.yaml").write_text(yaml.safe_dump(content), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value) == (
        f"{folder / 'landmarks.yaml'}: landmarks.island.terrains: landmark 'island' may only "
        "stand on impassable terrain (water): nobody could reach it"
    )


def test_water_is_fine_as_a_neighbour_or_alongside_land(tmp_path: Path) -> None:
    folder = _config_dir(tmp_path)
    content = _landmarks(reeds={**SPRING, "terrains": ["water", "coast"], "near": ["water"]})
    (folder / "landmarks.yaml").write_text(yaml.safe_dump(content), encoding="utf-8")
    spec = load_config(folder).landmarks.landmarks["reeds"]
    assert spec.terrains == [Terrain.WATER, Terrain.COAST]
