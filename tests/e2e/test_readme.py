"""README's Quick start is the contract with a new user, and CI runs it verbatim."""

from __future__ import annotations

import importlib.util

from tests.conftest import PROJECT_DIR


def load_quickstart():
    path = PROJECT_DIR / ".ci" / "quickstart.py"
    spec = importlib.util.spec_from_file_location("quickstart", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_start_holds_exactly_two_commands() -> None:
    readme = (PROJECT_DIR / "README.md").read_text(encoding="utf-8")
    lines = load_quickstart().quickstart_lines(readme)
    assert len(lines) == 2
    run_line, test_line = lines
    assert "pip install" in run_line and "hearth" in run_line
    assert "pip install" in test_line and '".[dev]"' in test_line
    assert "lint-imports" in test_line and "pytest" in test_line


def test_ci_runs_line_two_from_the_readme() -> None:
    script = (PROJECT_DIR / ".ci" / "run").read_text(encoding="utf-8")
    assert "quickstart.py 2" in script
    assert 'eval "$line2"' in script


def test_quickstart_parser_ignores_blocks_before_the_heading() -> None:
    text = "# X\n```\nnot this\n```\n## Quick start\nprose\n```bash\none\ntwo\n```\n"
    assert load_quickstart().quickstart_lines(text) == ["one", "two"]
