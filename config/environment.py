"""Where this run keeps its files, and its API key: flags, then environment, then defaults.

The mapping of environment variables is passed in rather than read from
os.environ, so the precedence rules can be tested without touching the real
process environment. Nothing here creates folders: resolving a path is not
the moment to decide whether writing there is wanted.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_VAR = "HEARTH_DATA_DIR"
AGENTS_DIR_VAR = "HEARTH_AGENTS_DIR"
API_KEY_VAR = "ANTHROPIC_API_KEY"


def _non_blank(environ: Mapping[str, str], name: str) -> str | None:
    """An environment value, with empty or whitespace-only treated as unset."""
    value = environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def _absolute(path: Path | str) -> Path:
    """Relative paths are taken from the current working directory, as a shell would."""
    return Path(path).expanduser().absolute()


def _pick(explicit: Path | None, environ: Mapping[str, str], var: str, default: Path) -> Path:
    if explicit is not None:
        return _absolute(explicit)
    return _absolute(_non_blank(environ, var) or default)


@dataclass(frozen=True)
class RuntimeEnv:
    data_dir: Path
    agents_dir: Path
    api_key: str | None
    flags: tuple[str, ...] = ()
    """The folder flags this run was given (`--data-dir X`, `--agents-dir Y`): every
    command Hearth suggests carries them, so a hint copied as printed reaches this world."""

    def command(self, *words: str) -> str:
        """`hearth WORDS` as a person would type it to reach this same world."""
        return shlex.join(("hearth", *self.flags, *words))

    @classmethod
    def resolve(
        cls,
        environ: Mapping[str, str],
        base_dir: Path,
        data_dir: Path | None = None,
        agents_dir: Path | None = None,
    ) -> RuntimeEnv:
        """Explicit arguments (CLI flags) win over HEARTH_DATA_DIR / HEARTH_AGENTS_DIR,
        which win over base_dir/data and base_dir/agents."""
        data = _pick(data_dir, environ, DATA_DIR_VAR, Path(base_dir) / "data")
        agents = _pick(agents_dir, environ, AGENTS_DIR_VAR, Path(base_dir) / "agents")
        flags: tuple[str, ...] = ()
        if data_dir is not None:
            flags += ("--data-dir", str(data))
        if agents_dir is not None:
            flags += ("--agents-dir", str(agents))
        return cls(data_dir=data, agents_dir=agents, api_key=_non_blank(environ, API_KEY_VAR),
                   flags=flags)
