"""ConfigError: a configuration file could not be used, said in one line.

Its own module so that reading YAML (config/yaml_read.py) and checking what was read
(config/loader.py) can both raise it without importing each other.
"""

from __future__ import annotations

import re
from pathlib import Path

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


def one_line(text: str) -> str:
    return _NEWLINES.sub(" ", text).strip()


class ConfigError(Exception):
    """A configuration file could not be used.

    `location` is a dotted field path such as "agents.1.name" for schema errors, and
    None for whole-file problems and YAML syntax errors. `line` and `column` (1-based)
    say where in the file, when that is known: they print as `FILE:LINE:COL:`, the
    shape editors and terminals turn into a jump to the place.
    """

    def __init__(self, path: Path, problem: str, location: str | None = None,
                 line: int | None = None, column: int | None = None) -> None:
        super().__init__(path, problem, location, line, column)  # keeps it picklable
        self.path = Path(path)
        self.problem = one_line(problem)
        self.location = one_line(location) if location is not None else None
        self.line = line
        self.column = column if line is not None else None

    def __str__(self) -> str:
        where = one_line(str(self.path))
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        if self.location:
            return f"{where}: {self.location}: {self.problem}"
        return f"{where}: {self.problem}"
