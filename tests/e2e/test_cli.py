"""The command line as a person uses it: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import main
from config import CONFIG_DIR
from observe import watch_command
from observe.command_line import parse_args
from tests.conftest import PROJECT_DIR


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("HEARTH_DATA_DIR", raising=False)
    monkeypatch.delenv("HEARTH_AGENTS_DIR", raising=False)
    return tmp_path / "data", tmp_path / "agents"


def hearth(capsys: pytest.CaptureFixture[str], dirs: tuple[Path, Path], *args: str):
    data, agents = dirs
    code = main.main(["--data-dir", str(data), "--agents-dir", str(agents), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_status_without_a_world_says_how_to_make_one(capsys, dirs) -> None:
    code, out, err = hearth(capsys, dirs, "--status")
    assert code == 1
    assert f"hearth --data-dir {dirs[0]} --agents-dir {dirs[1]} --init" in out, out
    assert not dirs[0].exists(), "status must not create anything"


def test_status_json_without_a_world(capsys, dirs) -> None:
    code, out, _ = hearth(capsys, dirs, "--status", "--json")
    assert code == 1
    assert json.loads(out)["error"] == "no_world"


def test_first_run_creates_the_world_and_later_runs_reuse_it(capsys, dirs) -> None:
    code, out, err = hearth(capsys, dirs)
    assert code == 0, err
    assert "creating one" in out and "Ember" in out and "Sage" in out and "River" in out
    assert (dirs[0] / "world.db").exists() and dirs[1].is_dir()
    code, out, err = hearth(capsys, dirs)
    assert code == 0 and "creating" not in out

    code, out, _ = hearth(capsys, dirs, "--status", "--json")
    status = json.loads(out)
    assert code == 0
    assert status["initialised"] is True
    assert (status["width"], status["height"], status["tick"]) == (500, 500, 0)
    assert [a["name"] for a in status["agents"]] == ["Ember", "River", "Sage"]
    assert status["schema_version"] == status["latest_schema_version"]


def test_init_with_seed_records_it_and_refuses_to_overwrite(capsys, dirs) -> None:
    assert hearth(capsys, dirs, "--init", "--seed", "42")[0] == 0
    code, out, _ = hearth(capsys, dirs, "--status", "--json")
    assert json.loads(out)["seed"] == 42

    code, out, err = hearth(capsys, dirs, "--init")
    assert code == 2
    assert err.count("\n") == 1 and "already exists" in err and "--force" in err


def test_init_force_backs_up_the_old_world(capsys, dirs) -> None:
    assert hearth(capsys, dirs, "--init", "--seed", "1")[0] == 0
    code, out, err = hearth(capsys, dirs, "--init", "--seed", "2", "--force")
    assert code == 0, err
    backups = list((dirs[0] / "backups").glob("world.replaced.*/world.db"))
    assert len(backups) == 1
    old = sqlite3.connect(backups[0])
    assert old.execute("SELECT seed FROM world_state").fetchone() == (1,)
    old.close()
    _, out, _ = hearth(capsys, dirs, "--status", "--json")
    assert json.loads(out)["seed"] == 2


@pytest.mark.parametrize(
    "args",
    [["--bogus"], ["--json"], ["--seed", "3"], ["--status", "--init"], ["--init", "--seed", "x"]],
)
def test_usage_mistakes_get_argparse_errors(capsys, dirs, args) -> None:
    with pytest.raises(SystemExit) as exit_:
        hearth(capsys, dirs, *args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hearth: ") and "--help" in err
    assert "Traceback" not in err


def test_newer_database_is_refused_in_one_line(capsys, dirs) -> None:
    assert hearth(capsys, dirs, "--init")[0] == 0
    db = dirs[0] / "world.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = db.read_bytes()
    for args in ([], ["--status"]):
        code, out, err = hearth(capsys, dirs, *args)
        assert code == 1
        assert err.count("\n") == 1 and "newer Hearth" in err and str(db) in err
    assert db.read_bytes() == before


def test_non_database_file_is_refused_in_one_line(capsys, dirs) -> None:
    dirs[0].mkdir(parents=True)
    db = dirs[0] / "world.db"
    db.write_text("my shopping list\n")
    code, out, err = hearth(capsys, dirs)
    assert code == 1
    assert err.count("\n") == 1 and "not an SQLite database" in err
    assert db.read_text() == "my shopping list\n"


@pytest.mark.hostile
def test_data_dir_that_is_a_file_is_a_one_line_error(capsys, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    code, out, err = hearth(capsys, (blocker, tmp_path / "agents"))
    assert code == 1
    assert err.count("\n") == 1 and str(blocker) in err and "Traceback" not in err
    assert blocker.read_text() == "x"


# --- config mistakes through the real CLI ------------------------------------------------

BROKEN_CONFIGS = [
    ("settings.yaml", "world:\n  width: [500\n", "settings.yaml:3:1: "),
    ("settings.yaml", "- just\n- a list\n", "settings.yaml: expected a mapping at the top level"),
    ("settings.yaml", "world:\n  widht: 500\n", "settings.yaml:2:3: world.widht: "),
    ("settings.yaml", "world:\n  width: 3\n", "settings.yaml: world.width: "),
    ("settings.yaml", "vision:\n  radius: far\n", "settings.yaml: vision.radius: "),
    ("settings.yaml", "placement:\n  min_spacing: 50\n  max_spacing: 10\n",
     "settings.yaml: placement: "),
    ("agents.yaml", "agents: []\n", "agents.yaml: agents: "),
    ("agents.yaml", "agents:\n  - name: '../root'\n    model_id: m\n    personality: p\n",
     "agents.yaml: agents.0.name: "),
    ("agents.yaml",
     "agents:\n  - {name: Ember, model_id: m, personality: p}\n"
     "  - {name: ember, model_id: m, personality: p}\n",
     "agents.yaml: agents: "),
    ("recipes.yaml",
     "recipes:\n  - {name: plank, action: work, inputs: [wood], technique: smash}\n",
     "recipes.yaml: recipes.0.technique: "),
    ("terrain.yaml", "terrains:\n  water: {passable: false}\n", "terrain.yaml: terrains"),
    ("terrain.yaml", b"terrains: \xff\xfe\n", "terrain.yaml:1:11: "),
]


@pytest.mark.parametrize(("name", "content", "expected"), BROKEN_CONFIGS)
def test_config_mistakes_exit_2_with_one_line(
    capsys, dirs, tmp_path: Path, name: str, content: str | bytes, expected: str
) -> None:
    config_dir = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config_dir, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    target = config_dir / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    code, out, err = hearth(capsys, dirs, "--config-dir", str(config_dir), "--init")
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"hearth: config error: {target}"), err
    assert expected in err, err
    assert "Traceback" not in err
    assert not (dirs[0] / "world.db").exists(), "a config mistake must not create a world"


# --- the real entry points -----------------------------------------------------------------


def run_cli(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HEARTH_DATA_DIR": str(tmp_path / "data"),
           "HEARTH_AGENTS_DIR": str(tmp_path / "agents"), "PYTHONPATH": str(PROJECT_DIR)}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)


def test_python_dash_m_main_runs(tmp_path: Path) -> None:
    result = run_cli([sys.executable, "-m", "main", "--status"], tmp_path)
    assert result.returncode == 1
    assert "hearth --init" in result.stdout
    assert str(tmp_path / "data") in result.stdout, "HEARTH_DATA_DIR is honoured"


def test_console_script_runs(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("hearth")
    if not script.exists():
        pytest.fail("the `hearth` console script is not installed: run `pip install -e .`")
    result = run_cli([str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Created a 500x500 world" in result.stdout
    assert (tmp_path / "data" / "world.db").exists()


def test_watch_without_a_world_off_a_terminal_says_how_to_make_one(capsys, dirs) -> None:
    code, out, err = hearth(capsys, dirs, "--watch")
    assert code == 1
    assert f"hearth --data-dir {dirs[0]} --agents-dir {dirs[1]} --init" in err, err
    assert "Traceback" not in err
    assert not (dirs[0] / "world.db").exists(), "--watch never creates a world"


def test_mind_goes_with_running_or_watching_only(capsys, dirs) -> None:
    with pytest.raises(SystemExit) as stop:
        hearth(capsys, dirs, "--status", "--mind", "offline")
    assert stop.value.code == 2
    assert "--mind goes with --run, --watch or plain hearth" in capsys.readouterr().err


def test_at_a_terminal_plain_hearth_asks_for_the_observer(dirs, monkeypatch) -> None:
    import asyncio

    monkeypatch.setattr(watch_command, "interactive", lambda: True)
    data, agents = dirs
    args = parse_args(["--data-dir", str(data), "--agents-dir", str(agents)], main.PROJECT_DIR)
    outcome = asyncio.run(main.run(args))
    assert isinstance(outcome, watch_command.Watch)
    assert (data / "world.db").exists(), "the first run creates the world before watching"
    assert outcome.env.data_dir == data and outcome.mind is None


@pytest.mark.hostile
@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("args", [["--run", "2"], ["--init"], ["--status"]])
def test_a_data_or_agents_folder_that_is_a_file_is_refused_in_a_line(
    capsys, dirs, which: int, args: list[str]
) -> None:
    """Issue 26: a data folder that was a file gave "File exists"."""
    dirs[which].parent.mkdir(parents=True, exist_ok=True)
    dirs[which].write_text("a note, not a world\n")
    code, out, err = hearth(capsys, dirs, *args)
    assert code == 1
    assert err.count("\n") == 1 and "is a file, not a folder" in err
    assert dirs[which].read_text() == "a note, not a world\n"


@pytest.mark.hostile
def test_a_lock_held_by_another_program_is_waited_for_then_stops_the_run_in_a_line(
    capsys, dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: a lock held past the writer's patience gave a `database is locked`
    traceback. Now the run says it waits, and past its patience (settings.yaml's
    `storage.lock_patience_seconds`, 2 s here) stops in one line, with everything
    committed kept (the next run goes on)."""
    import subprocess
    import sys

    from storage import direct_db

    assert hearth(capsys, dirs, "--init", "--seed", "1", "--size", "48x40")[0] == 0
    patient = dirs[0].parent / "config"
    patient.mkdir()
    for source in (Path(main.__file__).parent / "config").glob("*.yaml"):
        (patient / source.name).write_text(source.read_text())
    settings = patient / "settings.yaml"
    settings.write_text(settings.read_text().replace("lock_patience_seconds: 60",
                                                     "lock_patience_seconds: 2"))
    monkeypatch.setattr(direct_db, "LOCK_PATIENCE", direct_db.LOCK_PATIENCE)  # put back after
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], "
         "isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); "
         "sys.stdin.readline()", str(dirs[0] / "world.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out, err = hearth(capsys, dirs, "--config-dir", str(patient), "--run", "3",
                                "--quiet")
    finally:
        holder.communicate("\n", timeout=30)
    assert code == 1, out + err
    lines = [line for line in err.splitlines() if line.startswith("hearth:")]
    assert len(lines) == 1 and "locked by another program" in lines[0]
    assert "Traceback" not in out + err
    code, out, err = hearth(capsys, dirs, "--run", "2", "--quiet")
    assert code == 0, err
