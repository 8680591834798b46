"""Where a run keeps its data: CLI flags beat environment variables beat defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import RuntimeEnv


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_defaults_come_from_base_dir(tmp_path: Path) -> None:
    env = RuntimeEnv.resolve({}, base_dir=tmp_path / "app")
    assert env == RuntimeEnv(tmp_path / "app" / "data", tmp_path / "app" / "agents", None)


def test_environment_beats_defaults(tmp_path: Path) -> None:
    environ = {"HEARTH_DATA_DIR": "/srv/data", "HEARTH_AGENTS_DIR": "/srv/agents"}
    env = RuntimeEnv.resolve(environ, base_dir=tmp_path)
    assert env.data_dir == Path("/srv/data")
    assert env.agents_dir == Path("/srv/agents")


def test_explicit_arguments_beat_environment(tmp_path: Path) -> None:
    environ = {"HEARTH_DATA_DIR": "/srv/data", "HEARTH_AGENTS_DIR": "/srv/agents"}
    env = RuntimeEnv.resolve(
        environ, base_dir=tmp_path, data_dir=Path("/flag/data"), agents_dir=Path("/flag/agents")
    )
    assert env.data_dir == Path("/flag/data")
    assert env.agents_dir == Path("/flag/agents")


def test_each_directory_is_resolved_independently(tmp_path: Path) -> None:
    env = RuntimeEnv.resolve(
        {"HEARTH_AGENTS_DIR": "/srv/agents"}, base_dir=tmp_path, data_dir=Path("/flag/data")
    )
    assert env.data_dir == Path("/flag/data")
    assert env.agents_dir == Path("/srv/agents")


def test_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    env = RuntimeEnv.resolve(
        {"HEARTH_AGENTS_DIR": "people"}, base_dir=Path("."), data_dir=Path("store")
    )
    assert env.data_dir == tmp_path / "store"
    assert env.agents_dir == tmp_path / "people"
    assert RuntimeEnv.resolve({}, base_dir=Path("app")).data_dir == tmp_path / "app" / "data"


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_blank_values_count_as_unset(tmp_path: Path, blank: str) -> None:
    environ = {"HEARTH_DATA_DIR": blank, "HEARTH_AGENTS_DIR": blank, "ANTHROPIC_API_KEY": blank}
    env = RuntimeEnv.resolve(environ, base_dir=tmp_path)
    assert env == RuntimeEnv(tmp_path / "data", tmp_path / "agents", None)


def test_api_key_is_read_and_trimmed(tmp_path: Path) -> None:
    env = RuntimeEnv.resolve({"ANTHROPIC_API_KEY": " sk-test \n"}, base_dir=tmp_path)
    assert env.api_key == "sk-test"


def test_folders_are_not_created(tmp_path: Path) -> None:
    env = RuntimeEnv.resolve({}, base_dir=tmp_path)
    assert not env.data_dir.exists()
    assert not env.agents_dir.exists()
