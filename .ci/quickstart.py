"""Print line N (1 or 2) of the first fenced code block under README's "Quick start".

.ci/run uses this so CI runs exactly the command a person copies from the README.
"""

from __future__ import annotations

import sys
from pathlib import Path


def quickstart_lines(readme: str) -> list[str]:
    lines = readme.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#") and "quick start" in line.lower():
            rest = lines[i + 1 :]
            start = next(j for j, text in enumerate(rest) if text.startswith("```"))
            end = next(j for j, text in enumerate(rest[start + 1 :], start + 1)
                       if text.startswith("```"))
            return [text for text in rest[start + 1 : end] if text.strip()]
    raise SystemExit("README.md has no 'Quick start' heading")


if __name__ == "__main__":
    readme = Path(__file__).resolve().parent.parent / "README.md"
    commands = quickstart_lines(readme.read_text(encoding="utf-8"))
    if len(commands) != 2:
        raise SystemExit(f"Quick start must hold exactly two commands, found {len(commands)}")
    print(commands[int(sys.argv[1]) - 1])
