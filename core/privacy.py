"""What an agent wrote in its journal stays its own: no view of the world shows it.

Every Claude agent is told "Nobody else reads your journal" (adapters/claude_mind/
prompt.py), and the reference design holds the journal sacred. The turn's record keeps
what the agent did and heard, word for word (nothing it wrote is lost or altered), so
the rule is kept where the record is shown or searched: the observer's feed, agent
detail, provenance and looking back, and `recall` (services/recall.py), which only
ever answers the agent itself, read it through `shown_action`. A view says that the
agent wrote in its journal, and how much; never the words.

    args, text = shown_action("append_file", {"path": "journal.md", "text": "..."}, text)
"""

from __future__ import annotations

from collections.abc import Mapping

JOURNAL = "journal.md"
"""The agent's diary, in its home folder (adapters/agent_files.py: the journal rule)."""
WRITING = frozenset({"write_file", "append_file", "edit_file"})
"""File tools whose arguments carry the words written."""
READING = frozenset({"read_file"})
"""File tools whose result carries the file's words."""
WORD_KEYS = ("text", "old", "new")
"""The arguments of WRITING that hold words."""


def is_journal(path: object) -> bool:
    """Whether `path` names the journal, however it is spelt (./journal.md, JOURNAL.MD:
    a view errs on the side of keeping quiet)."""
    if not isinstance(path, str):
        return False
    parts = [p for p in path.strip().replace("\\", "/").split("/") if p not in ("", ".")]
    return parts == [JOURNAL] or [p.lower() for p in parts] == [JOURNAL]


def private_call(tool: str, args: Mapping[str, object] | None) -> bool:
    """Whether a call wrote or read the agent's journal."""
    return tool in WRITING | READING and is_journal((args or {}).get("path"))


def shown_action(tool: str, args: Mapping[str, object] | None, text: str
                 ) -> tuple[Mapping[str, object] | None, str]:
    """A call's arguments and result as a view may show them: for a journal call, the
    path and how many characters went in; a read's result without the words read."""
    if not private_call(tool, args):
        return args, text
    shown: dict[str, object] = {"path": JOURNAL}
    written = sum(len(v) for k, v in (args or {}).items() if k in WORD_KEYS and isinstance(v, str))
    if tool in WRITING:
        shown["words"] = f"{written} characters, the agent's own"
    said = text.split("\n", 1)[0]  # "read journal.md (120 bytes)": the words come after
    return shown, said
