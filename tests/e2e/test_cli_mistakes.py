"""A new user's mistakes, each named in one line (issue 39, item 6, "Mistakes named").

Tried as a new user: a misspelt `model_id` passed `--init` and `--run`; `model_idd:` was
reported as "model_id: Field required" without naming the key; an unclosed quote printed
the lines it swallowed; a missing `--config-dir` was "settings.yaml: file not found";
`--stauts` got no "did you mean". Each case here writes real files in tmp_path, runs the
real CLI (in-process through `main.main`, and a process for a few) and pins the whole
line, its exit code (2, as for every config or usage mistake) and that no traceback and
no world came of it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import main
from config import CONFIG_DIR
from tests.e2e.processes import PROJECT, clean_env

AGENTS = """\
agents:
  - name: Ember
    model_id: {model}
    personality: Curious.
  - name: Sage
    model_id: claude-haiku-5-5
    personality: Calm.
"""
"""An agents.yaml small enough that its lines are known: Ember's model id is at 3:15."""


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path with config/ (the shipped YAML files), and no key nor folders set."""
    for name in ("HEARTH_DATA_DIR", "HEARTH_AGENTS_DIR", "ANTHROPIC_API_KEY",
                 "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(CONFIG_DIR, tmp_path / "config",
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return tmp_path


def hearth(capsys: pytest.CaptureFixture[str], where: Path, *args: str) -> tuple[int, str]:
    """`hearth` over `where`'s folders: its exit code and what it said on stderr (a usage
    mistake ends in argparse's SystemExit, whose code is the exit code)."""
    folders = ["--data-dir", str(where / "data"), "--agents-dir", str(where / "agents"),
               "--config-dir", str(where / "config")]
    try:
        code = main.main([*folders, *args])
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    said = capsys.readouterr()
    assert "Traceback" not in said.out + said.err
    return code, said.err


def agents_with(where: Path, model: str) -> Path:
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model=model))
    return path


def no_world(where: Path) -> bool:
    return not (where / "data" / "world.db").exists()


# --------------------------------------------------------------------------- model ids


def test_a_misspelt_model_id_is_refused_at_init_without_a_key(capsys, where: Path) -> None:
    path = agents_with(where, "claude-sonet-5-5")
    code, err = hearth(capsys, where, "--init", "--size", "30x30")
    assert (code, err) == (2, f"hearth: config error: {path}:3:15: agents.0.model_id: "
                              "claude-sonet-5-5 is not a Claude model Hearth knows; "
                              "did you mean claude-sonnet-5-5?\n")
    assert no_world(where)


def test_a_misspelt_model_id_is_refused_at_run_with_a_key_before_any_request(
    capsys, where: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Key or no key: with one, the Models API is never asked (port 9 answers nobody)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    path = agents_with(where, "claude-haiku-9-9")
    code, err = hearth(capsys, where, "--run", "1")
    assert (code, err) == (2, f"hearth: config error: {path}:3:15: agents.0.model_id: "
                              "claude-haiku-9-9 is not a Claude model Hearth knows; "
                              "did you mean claude-haiku-5-5?\n")
    assert no_world(where)


def test_an_id_like_no_model_lists_the_current_ones_and_how_to_price_ones_own(
    capsys, where: Path
) -> None:
    path = agents_with(where, "my-proxy-model")
    code, err = hearth(capsys, where, "--run", "1", "--mind", "offline")
    assert (code, err) == (2, f"hearth: config error: {path}:3:15: agents.0.model_id: "
                              "my-proxy-model is not a Claude model Hearth knows; use one of "
                              "claude-fable-5-1, claude-opus-5-5, claude-sonnet-5-5, "
                              "claude-haiku-5-5 (an endpoint's own model: price it under "
                              "claude.prices in settings.yaml)\n")
    assert no_world(where)


def test_an_endpoints_own_model_is_used_once_settings_yaml_prices_it(
    capsys, where: Path
) -> None:
    """An `ANTHROPIC_BASE_URL` endpoint's own id: priced, it is a model Hearth knows (the
    Models API, asked before a run with a key, still decides whether the key may use it)."""
    agents_with(where, "my-proxy-model")
    settings = where / "config" / "settings.yaml"
    lines = settings.read_text().splitlines(keepends=True)
    at = next(i for i, row in enumerate(lines) if row.startswith("  narrator_model:"))
    lines.insert(at + 1, "  prices:\n    my-proxy-model: {input: 1.0, output: 5.0, "
                         "cache_write: 1.25, cache_read: 0.1}\n")
    settings.write_text("".join(lines))
    code, err = hearth(capsys, where, "--init", "--size", "30x30")
    assert code == 0, err
    assert not no_world(where)


def test_a_local_models_own_name_is_not_checked(capsys, where: Path) -> None:
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model="qwen3:8b").replace(
        "    personality: Curious.\n",
        "    personality: Curious.\n    mind: local\n    base_url: http://localhost:11434/v1\n"))
    code, err = hearth(capsys, where, "--init", "--size", "30x30")
    assert code == 0, err


def test_a_misspelt_narrator_model_is_named_at_its_line_in_settings(
    capsys, where: Path
) -> None:
    settings = where / "config" / "settings.yaml"
    text = settings.read_text().replace("narrator_model: claude-haiku-5-5",
                                        "narrator_model: claude-haiku-55")
    settings.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1)
                if "narrator_model: claude-haiku-55" in row)
    column = text.splitlines()[line - 1].index("claude-haiku-55") + 1
    code, err = hearth(capsys, where, "--init", "--size", "30x30")
    assert (code, err) == (2, f"hearth: config error: {settings}:{line}:{column}: "
                              "claude.narrator_model: claude-haiku-55 is not a Claude model "
                              "Hearth knows; did you mean claude-haiku-5-5?\n")


# --------------------------------------------------------------------------- unknown keys


def test_a_misspelt_key_is_named_not_the_key_it_leaves_missing(capsys, where: Path) -> None:
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model="claude-sonnet-5-5").replace("model_id", "model_idd", 1))
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:3:5: agents.0.model_idd: "
                              "unknown key; did you mean 'model_id'?\n")


def test_of_several_problems_the_unknown_key_is_named_first(capsys, where: Path) -> None:
    """The colour comes first in the file, but the typo is what a person must see."""
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model="claude-sonnet-5-5").replace(
        "    personality: Curious.\n", "    personality: Curious.\n    color: red\n").replace(
        "    personality: Calm.\n", "    personalty: Calm.\n"))
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:8:5: agents.1.personalty: "
                              "unknown key; did you mean 'personality'? (and 1 more problem)\n")


@pytest.mark.parametrize(("name", "anchor", "typo", "loc", "meant"), [
    ("settings.yaml", "  width: ", "  widht: 500", "world.widht", "width"),
    ("recipes.yaml", "    action: work", "    acton: work", "recipes.0.acton", "action"),
    ("terrain.yaml", "    passable: false", "    pasable: false", "terrains.water.pasable",
     "passable"),
    ("landmarks.yaml", "    near: [coast]", "    neer: [coast]", "landmarks.spring.neer",
     "near"),
    ("agents.yaml", "    color: ", "    colour: '#e07a5f'", "agents.0.colour", "color"),
])
def test_an_unknown_key_in_any_file_is_named_at_its_line(
    capsys, where: Path, name: str, anchor: str, typo: str, loc: str, meant: str
) -> None:
    path = where / "config" / name
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, row in enumerate(lines) if row.startswith(anchor))
    lines.insert(at, typo + "\n")
    path.write_text("".join(lines))
    column = len(typo) - len(typo.lstrip()) + 1
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:{at + 1}:{column}: {loc}: "
                              f"unknown key; did you mean {meant!r}?\n")
    assert no_world(where)


# --------------------------------------------------------------------------- YAML syntax


def test_a_quote_never_closed_is_named_where_it_opens(capsys, where: Path) -> None:
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model="claude-sonnet-5-5").replace("Calm.", '"Calm.'))
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:7:18: "
                              "a quoted string is never closed\n")


def test_a_quote_closed_only_by_the_next_one_is_named_not_what_it_swallowed(
    capsys, where: Path
) -> None:
    """`color: "#e07a5f` runs on to the next `"`, lines later; YAML takes it whole, and
    the colour check would have echoed every line it took."""
    path = where / "config" / "agents.yaml"
    path.write_text(AGENTS.format(model="claude-sonnet-5-5").replace(
        "    personality: Curious.\n", '    color: "#e07a5f\n    personality: Curious.\n')
        .replace("    personality: Calm.\n", '    personality: Calm.\n    color: "#81b29a"\n'))
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:4:12: agents.0.color: "
                              "a quoted string runs on to line 9: is its closing quote "
                              "missing?\n")


def test_a_syntax_error_is_one_short_line_without_the_yaml(capsys, where: Path) -> None:
    path = where / "config" / "settings.yaml"
    path.write_text("world:\n  width: 100\n  height: : 5\n")
    code, err = hearth(capsys, where, "--init")
    assert (code, err) == (2, f"hearth: config error: {path}:3:11: "
                              "mapping values are not allowed here\n")


# --------------------------------------------------------------------------- the command line


def test_a_missing_config_folder_is_called_a_missing_folder(capsys, where: Path) -> None:
    code, err = hearth(capsys, where, "--status", "--config-dir", str(where / "nope"))
    assert (code, err) == (2, f"hearth: --config-dir {where / 'nope'}: no such folder\n")


def test_a_config_folder_that_is_a_file_is_called_a_file(capsys, where: Path) -> None:
    file = where / "config.yaml"
    file.write_text("world: {}\n")
    code, err = hearth(capsys, where, "--status", "--config-dir", str(file))
    assert (code, err) == (2, f"hearth: --config-dir {file}: a file, not a folder\n")


@pytest.mark.parametrize(("words", "said"), [
    (["--stauts"], "unrecognized argument --stauts (did you mean --status?)"),
    (["status"], "unrecognized argument status (did you mean --status?)"),
    (["--run", "3", "--quite"], "unrecognized argument --quite (did you mean --quiet?)"),
    (["--stauts", "--jsno"], "unrecognized arguments --stauts --jsno "
                             "(did you mean --status for --stauts, --json for --jsno?)"),
    (["--frobnicate"], "unrecognized argument --frobnicate (see hearth --help)"),
])
def test_a_misspelt_flag_gets_did_you_mean(capsys, where: Path, words: list[str],
                                           said: str) -> None:
    code, err = hearth(capsys, where, *words)
    assert (code, err) == (2, f"hearth: {said}\n")
    assert no_world(where)


def test_in_a_real_process_too(tmp_path: Path) -> None:
    """The console's own path: the process's exit code and stderr, nothing on stdout."""
    for words, said in ((["--stauts"], "hearth: unrecognized argument --stauts "
                                       "(did you mean --status?)\n"),
                        (["--config-dir", str(tmp_path / "nope"), "--init"],
                         f"hearth: --config-dir {tmp_path / 'nope'}: no such folder\n")):
        done = subprocess.run([sys.executable, str(PROJECT / "main.py"), *words],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env=clean_env())
        assert (done.returncode, done.stdout, done.stderr) == (2, "", said)
