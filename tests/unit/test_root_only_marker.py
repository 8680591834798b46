"""The `needs_root` marker (tests/conftest.py): skipped for a normal user, and a root run
that skips one fails, so CI (root) can never lose a root-only test without a red run.

Each case runs pytest in a subprocess, on a small test file written here, with the
repo's conftest as its only plugin, without pytest-xdist and with two workers (whose
reports reach the controller, where the skips are counted). HEARTH_TESTS_AS_ROOT says
whether the run is root, so both ways are tried whoever runs this.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = '''
import os

import pytest

WHY = pytest.mark.needs_root("a test of the marker")


@pytest.fixture
def skipping():
    pytest.skip("its fixture skipped")


@WHY
def test_root_skipping_inside():
    pytest.skip("skipped inside")


@WHY
def test_root_skipped_by_its_fixture(skipping):
    pass


@WHY
@pytest.mark.skipif(True, reason="a skipif")
def test_root_skipped_by_skipif():
    pass


@WHY
def test_root_passing():
    assert os.environ["HEARTH_TESTS_AS_ROOT"] == "1", "ran in a run that is not root"


@WHY
@pytest.mark.slow
def test_root_but_slow():
    pass


def test_plain_skipping():
    pytest.skip("nothing to do with root")


def test_plain():
    pass
'''

INI = '''[pytest]
markers =
    slow: slow
    needs_root(why): root only
'''

SKIPPING = ["test_root_skipping_inside", "test_root_skipped_by_its_fixture",
            "test_root_skipped_by_skipif"]
NOT_COUNTED = ["test_root_passing", "test_root_but_slow", "test_plain_skipping"]


def pytest_run(folder: Path, project: Path, as_root: str, *args: str
               ) -> subprocess.CompletedProcess:
    (folder / "test_marked.py").write_text(TESTS, encoding="utf-8")
    (folder / "pytest.ini").write_text(INI, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["HEARTH_TESTS_AS_ROOT"] = as_root
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(folder / "pytest.ini"),
         "--rootdir", str(folder), "--basetemp", str(folder / "tmp"), "-p", "tests.conftest",
         "-p", "no:cacheprovider", "-q", "-rs", *args, str(folder / "test_marked.py")],
        capture_output=True, text=True, cwd=project, env=env, timeout=120)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_root_run_that_skips_a_root_test_fails_naming_each(
        tmp_path: Path, project_dir: Path, workers: str) -> None:
    done = pytest_run(tmp_path, project_dir, "1", "-n", workers)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    [line] = [text for text in said.splitlines() if "root-only test(s) skipped" in text]
    assert line.startswith("3 root-only test(s) skipped in a root run"), line
    named = re.findall(r"test_marked\.py::(\w+)", line)
    assert sorted(named) == sorted(SKIPPING), line
    assert "1 passed" in said or "2 passed" in said, said


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_root_run_whose_root_tests_all_run_passes(
        tmp_path: Path, project_dir: Path, workers: str) -> None:
    """The slow one left out without --run-slow, and a plain test's skip, do not count."""
    done = pytest_run(tmp_path, project_dir, "1", "-n", workers, "-k", " or ".join(NOT_COUNTED))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "root-only test(s) skipped" not in said, said
    assert "1 passed, 2 skipped" in said, said


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_normal_users_run_skips_every_root_test_with_one_reason_and_passes(
        tmp_path: Path, project_dir: Path, workers: str) -> None:
    done = pytest_run(tmp_path, project_dir, "0", "-n", workers, "--run-slow")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "root-only test(s) skipped" not in said, said
    for_root = [int(n) for n in re.findall(r"SKIPPED \[(\d+)\] .*: needs root: a test of the "
                                           r"marker$", said, re.MULTILINE)]
    # Every root test but the one whose own skipif comes first (pytest reads a skipif before
    # a skip); test_root_passing among them: it never ran, or it would have failed.
    assert sum(for_root) == 4, said
    assert "1 passed, 6 skipped" in said, said


def test_a_wrong_word_for_root_is_a_usage_error(tmp_path: Path, project_dir: Path) -> None:
    done = pytest_run(tmp_path, project_dir, "yes")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "HEARTH_TESTS_AS_ROOT must be 1 (root) or 0 (not root), not 'yes'" in done.stderr
