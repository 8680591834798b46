"""Shared test options: `--run-slow` opts in to tests marked slow; tests marked
`needs_root` run only as root, and as root they must never be skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parent.parent

AS_ROOT = "HEARTH_TESTS_AS_ROOT"
"""Set to 1 or 0 to say whether the run is root instead of asking the uid: how
tests/unit/test_root_only_marker.py tries both ways whoever runs it."""


def running_as_root() -> bool:
    said = os.environ.get(AS_ROOT)
    if said is None:
        return os.geteuid() == 0
    if said not in ("0", "1"):
        raise pytest.UsageError(f"{AS_ROOT} must be 1 (root) or 0 (not root), not {said!r}")
    return said == "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run tests marked slow")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(RootTests(config), "hearth-root-tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not running_as_root():
        for item in items:
            marker = item.get_closest_marker("needs_root")
            if marker is not None:
                why = marker.args[0] if marker.args else "see the test"
                item.add_marker(pytest.mark.skip(reason=f"needs root: {why}"))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


class RootTests:
    """Fails a root run in which a `needs_root` test was skipped, whatever skipped it (a
    `pytest.skip` in it, a skipif, a fixture): only root can run these tests, so a root
    run (CI's) that skips one has lost it silently. Kept on the controller when run under
    pytest-xdist, where every worker's reports arrive (with their markers in keywords)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if (not report.skipped or hasattr(report, "wasxfail")
                or "needs_root" not in report.keywords
                or hasattr(self.config, "workerinput")  # an xdist worker: the controller counts
                or not running_as_root()):
            return
        if "slow" in report.keywords and not self.config.getoption("--run-slow"):
            return  # left out on purpose, like every slow test
        if report.nodeid not in self.skipped:
            self.skipped.append(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.skipped:
            terminalreporter.write_line(
                f"{len(self.skipped)} root-only test(s) skipped in a root run, which must "
                f"run them all: {', '.join(self.skipped)}", red=True, bold=True)


@pytest.fixture
def project_dir() -> Path:
    return PROJECT_DIR
