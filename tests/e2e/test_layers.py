"""The layer and no-cycle contracts in pyproject.toml hold, and breaking one is caught.

`lint-imports` also runs in the Quick start test command; these tests make the
suite itself fail when a layer is crossed, and prove the contracts have teeth.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_DIR

PACKAGES = ("core", "storage", "generation", "config", "services", "adapters", "engine",
            "observe")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail("lint-imports is not installed next to this Python: install the dev extra")
    return subprocess.run(
        [str(exe), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


def copy_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(PROJECT_DIR / "pyproject.toml", root)
    for pkg in PACKAGES:
        shutil.copytree(PROJECT_DIR / pkg, root / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.yaml"))
    return root


def test_contracts_are_kept() -> None:
    result = lint_imports(PROJECT_DIR)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("core/types.py", "import storage", "Layers point one way"),
        ("core/types.py", "import sqlite3", "core is pure"),
        ("core/world.py", "import os", "core is pure"),
        ("storage/errors.py", "import services", "Layers point one way"),
        ("storage/errors.py", "import config", "Layers point one way"),
        ("services/status.py", "import engine", "Layers point one way"),
        ("engine/phases/commit.py", "import engine.engine", "No import cycles"),
        ("services/persistence.py", "import services.simulation", "No import cycles"),
        # a type-only import counts too (DESIGN.md "Layers")
        ("observe/tui/commands.py", "if TYPE_CHECKING:\n    import observe.tui.app",
         "No import cycles"),
        ("storage/world_check_common.py", "import storage.world_check", "No import cycles"),
    ],
)
def test_crossing_a_layer_breaks_the_build(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    root = copy_project(tmp_path)
    target = root / module
    target.write_text(target.read_text() + f"\n{line}  # crossing on purpose\n")
    result = lint_imports(root)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout.upper()
    assert contract in result.stdout
