"""What the schemas accept: defaults, optional sections, and the recipe graph helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import RecipeBook, Settings, load_agents, load_settings

AGENT_YAML = "agents:\n  - name: {name}\n    model_id: m\n    personality: p\n"


@pytest.mark.parametrize(
    "text",
    ["", "# only a comment\n", "world:\nvision:\n", "\ufeffworld:\n  width: 500\n"],
    ids=["empty", "comment-only", "null-sections", "utf8-bom"],
)
def test_settings_files_that_mean_all_defaults(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_settings(path) == Settings()


def test_partial_section_keeps_other_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text("world:\n  seed: 42\nplacement:\n  min_spacing: 60\n", encoding="utf-8")
    settings = load_settings(path)
    assert settings.world.seed == 42
    assert settings.world.width == 500
    assert (settings.placement.min_spacing, settings.placement.max_spacing) == (60, 60)


@pytest.mark.parametrize("name", ["Ember", "a", "x_1-y", "A" * 32])
def test_valid_agent_names(tmp_path: Path, name: str) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(AGENT_YAML.format(name=name), encoding="utf-8")
    assert load_agents(path).agents[0].name == name


def test_agent_strings_are_trimmed(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - name: Sage\n    model_id: m\n    personality: |\n      Calm.\n",
        encoding="utf-8",
    )
    assert load_agents(path).agents[0].personality == "Calm."


def _book(*recipes: tuple[str, list[str]]) -> RecipeBook:
    return RecipeBook.model_validate(
        {"recipes": [{"name": n, "action": "combine", "inputs": i} for n, i in recipes]}
    )


def test_unreachable_follows_chains_in_any_order() -> None:
    book = _book(("c", ["b", "wood"]), ("b", ["a", "wood"]), ("a", ["wood", "stone"]))
    assert book.unreachable({"wood", "stone"}) == []


def test_unreachable_reports_missing_inputs_and_cycles() -> None:
    book = _book(("a", ["b", "wood"]), ("b", ["a", "wood"]), ("c", ["wood", "gold"]))
    assert [(i, r.name, missing) for i, r, missing in book.unreachable({"wood"})] == [
        (0, "a", ["b"]),
        (1, "b", ["a"]),
        (2, "c", ["gold"]),
    ]
