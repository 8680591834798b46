"""Agents' home folders: the files of their inner life, kept on disk.

    agents/Ember/journal.md       the agent's diary: Hearth writes it once, empty,
                                  and never reads it
    agents/Ember/notes.md         personal observations
    agents/Ember/discoveries.md   what the agent has learnt about making things
    agents/Ember/.status          written by Hearth each turn: where and when, so the
                                  agent's own tools can see it (never inventory)

Creating a home never overwrites a file that exists: whatever an agent wrote is
theirs. Status files are replaced atomically so a reader never sees half a file.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.types import AgentName, agent_name

HOME_FILES: dict[str, str] = {
    "journal.md": "",
    "notes.md": "",
    "discoveries.md": "",
}
STATUS_FILE = ".status"


class AgentHomes:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, name: AgentName | str) -> Path:
        return self.root / agent_name(str(name))

    def create(self, name: AgentName | str, status: str) -> Path:
        """Make the agent's folder and files (keeping any that exist) and its status."""
        home = self.path(name)
        home.mkdir(parents=True, exist_ok=True)
        for filename, initial in HOME_FILES.items():
            try:
                with open(home / filename, "x", encoding="utf-8") as handle:
                    handle.write(initial)
            except FileExistsError:
                pass
        self.write_status(name, status)
        return home

    def write_status(self, name: AgentName | str, text: str) -> None:
        home = self.path(name)
        partial = home / f"{STATUS_FILE}.partial"
        partial.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        os.replace(partial, home / STATUS_FILE)

    def exists(self, name: AgentName | str) -> bool:
        return self.path(name).is_dir()
