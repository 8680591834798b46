"""The config-side rules behind issue 39's "Mistakes named" (the CLI's lines are in
tests/e2e/test_cli_mistakes.py): which model ids count as known, which agents are
checked, what the nearest id is, and that a long value is never echoed whole."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from config import CONFIG_DIR, ConfigError, load_agents, load_config
from core.model_catalog import nearest

AGENT = "  - name: {name}\n    model_id: {model}\n    personality: p.\n{more}"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copytree(CONFIG_DIR, tmp_path / "config",
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return tmp_path / "config"


def _agents(folder: Path, *agents: tuple[str, str, str]) -> Path:
    path = folder / "agents.yaml"
    path.write_text("agents:\n" + "".join(
        AGENT.format(name=name, model=model, more=more) for name, model, more in agents))
    return path


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-sonnet-5-5-20261101",
                                   "claude-sonnet-4", "claude-opus-4-1"])
def test_every_id_the_table_knows_passes_dated_and_retired_ones_included(
    folder: Path, model: str
) -> None:
    """A retired id is known: the check before a run refuses it with its own message,
    naming its successor, rather than as a model Hearth never heard of."""
    _agents(folder, ("Ember", model, ""))
    assert load_config(folder).agents.agents[0].model_id == model


def test_an_agent_on_the_offline_mind_is_checked_too(folder: Path) -> None:
    """`--mind claude` or `--mind auto` can hand it to Claude."""
    path = _agents(folder, ("Ember", "claude-sonnet-5-5", ""),
                   ("Sage", "claude-sonet-5-5", "    mind: offline\n"))
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value) == (f"{path}:6:15: agents.1.model_id: claude-sonet-5-5 is not a "
                                 "Claude model Hearth knows; did you mean claude-sonnet-5-5?")


def test_every_unknown_id_is_counted(folder: Path) -> None:
    path = _agents(folder, ("Ember", "claude-sonet-5-5", ""), ("Sage", "claude-haiku-55", ""))
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value) == (f"{path}:3:15: agents.0.model_id: claude-sonet-5-5 is not a "
                                 "Claude model Hearth knows; did you mean claude-sonnet-5-5? "
                                 "(and 1 more problem)")


def test_the_gardeners_model_is_checked(folder: Path) -> None:
    settings = folder / "settings.yaml"
    lines = settings.read_text().splitlines(keepends=True)
    section = next(i for i, row in enumerate(lines) if row.startswith("gardener:"))
    at = next(i for i, row in enumerate(lines) if i > section and row.startswith("  model:"))
    lines[at] = "  model: claude-haiku-5.5\n"
    settings.write_text("".join(lines))
    with pytest.raises(ConfigError) as caught:
        load_config(folder)
    assert str(caught.value) == (f"{settings}:{at + 1}:10: gardener.model: claude-haiku-5.5 is "
                                 "not a Claude model Hearth knows; did you mean "
                                 "claude-haiku-5-5?")


@pytest.mark.parametrize(("model", "also", "meant"), [
    ("claude-sonet-5-5", (), "claude-sonnet-5-5"),
    ("Claude-Opus-5-5", (), "claude-opus-5-5"),
    ("claude-fable-51", (), "claude-fable-5-1"),
    ("claude-mystery-9", (), None),  # every id starts `claude-`: that alone is not close
    ("claude-instant-1", (), None),
    ("my-proxy-modle", ("my-proxy-model",), "my-proxy-model"),
])
def test_the_nearest_id_is_a_slip_of_the_keys_away_or_none(
    model: str, also: tuple[str, ...], meant: str | None
) -> None:
    assert nearest(model, also) == meant


def test_a_long_value_is_not_echoed_whole(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("agents:\n  - name: Ember\n    model_id: m\n    personality: p\n"
                    f"    color: {'red ' * 100}\n")
    with pytest.raises(ConfigError) as caught:
        load_agents(path)
    assert len(caught.value.problem) == 200 and caught.value.problem.endswith("…")


def test_a_place_in_the_file_survives_pickling() -> None:
    """Errors cross process boundaries (the engine's threads and workers)."""
    err = ConfigError(Path("a.yaml"), "unknown key", "world.widht", line=8, column=3)
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) == "a.yaml:8:3: world.widht: unknown key"
