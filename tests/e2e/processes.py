"""Running the real program as a user does, in a subprocess, for the e2e tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def hearth_args(where: Path, *args: str) -> list[str]:
    """`hearth` on the world in `where/data`, homes in `where/agents`."""
    return [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
            "--agents-dir", str(where / "agents"), *args]


def clean_env() -> dict[str, str]:
    """This environment without any ANTHROPIC_ variable: the offline mind, no network."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def hearth(where: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(hearth_args(where, *args), capture_output=True, text=True,
                          timeout=timeout, cwd=PROJECT, env=clean_env())
