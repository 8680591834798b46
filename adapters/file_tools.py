"""The agent's own file tools as tool calls: specs a model sees, and their execution.

These sit beside the world's actions in every turn but never touch the world:
they read and write the agent's home folder through `AgentFiles` (sandboxed).
Their results go back to the mind as they are, without narration.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from adapters.agent_files import AgentFiles
from core.actions import ActionResult
from services.mind import ToolSpec


def _schema(**props: str) -> Mapping[str, Any]:
    return MappingProxyType({
        "type": "object",
        "properties": {name: {"type": "string", "description": text}
                       for name, text in props.items()},
        "required": list(props),
    })


_PATH = "A path inside your home folder, like journal.md or notes/trees.md."

FILE_TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("read_file", "Read one of your own files (your journal, notes, discoveries).",
             _schema(path=_PATH)),
    ToolSpec("write_file", "Write one of your own files, replacing what it held.",
             _schema(path=_PATH, text="The whole new content.")),
    ToolSpec("append_file", "Add text to the end of one of your own files, such as your "
             "journal. Nobody else reads your journal.",
             _schema(path=_PATH, text="The text to add.")),
    ToolSpec("list_files", "List what is in a folder of your home ('.' for the top).",
             _schema(path="A folder inside your home; '.' for the top.")),
    ToolSpec("edit_file", "Replace one exact passage of one of your files with new text.",
             _schema(path=_PATH, old="The passage to replace, exactly once in the file.",
                     new="What to put in its place.")),
)

FILE_TOOLS = frozenset(spec.name for spec in FILE_TOOL_SPECS)


def run_file_tool(files: AgentFiles, tool: str, arguments: Mapping[str, Any]) -> ActionResult:
    """Run one file tool; bad arguments are a failed result, never an exception."""
    if not isinstance(arguments, Mapping):
        return ActionResult.fail(f"{tool} needs its arguments as an object")
    args = dict(arguments)
    if tool == "read_file":
        result = files.read(args.get("path"))
    elif tool == "write_file":
        result = files.write(args.get("path"), args.get("text"))
    elif tool == "append_file":
        result = files.append(args.get("path"), args.get("text"))
    elif tool == "list_files":
        result = files.list(args.get("path", "."))
    elif tool == "edit_file":
        result = files.edit(args.get("path"), args.get("old"), args.get("new"))
    else:
        return ActionResult.fail(f"{tool!r} is not a file tool")
    text = result.message if not result.content else f"{result.message}\n{result.content}"
    data = {"path": args.get("path")}
    return ActionResult.ok(text, (), data) if result.ok else ActionResult.fail(text, data)
