"""The agent's own file tools: read, write, append to, list and edit its home folder.

These sit beside the world's actions in every turn but never touch the world: they
read and write the agent's home through `AgentFiles` (sandboxed). Their results go
back to the mind as they are, without narration. The three that change a file name it
in their `path` argument, which the engine saves first (adapters/file_undo.py), and
`hearth --fork` does them again to rebuild a home (`run_file_tool`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from adapters.agent_files import AgentFiles, FileResult
from adapters.tools.registry import Handler, Narration, Tool, ToolUse
from core.actions import ActionResult
from services.tool_input import ToolInputError

FileOp = Callable[[AgentFiles, Mapping[str, Any]], FileResult]


def _schema(**props: str) -> Mapping[str, Any]:
    return MappingProxyType({
        "type": "object",
        "properties": {name: {"type": "string", "description": text}
                       for name, text in props.items()},
        "required": list(props),
        "additionalProperties": False,
    })


_PATH = "A path inside your home folder, like journal.md or notes/trees.md."

_OPS: Mapping[str, tuple[str, Mapping[str, Any], FileOp, bool]] = MappingProxyType({
    # name: (description, input schema, what it does, whether it changes the file)
    "read_file": (
        "Read one of your own files (your journal, notes, discoveries).",
        _schema(path=_PATH),
        lambda files, args: files.read(args.get("path")), False),
    "write_file": (
        "Write one of your own files, replacing what it held.",
        _schema(path=_PATH, text="The whole new content."),
        lambda files, args: files.write(args.get("path"), args.get("text")), True),
    "append_file": (
        "Add text to the end of one of your own files, such as your journal. Nobody else "
        "reads your journal.",
        _schema(path=_PATH, text="The text to add."),
        lambda files, args: files.append(args.get("path"), args.get("text")), True),
    "list_files": (
        "List what is in a folder of your home ('.' for the top).",
        _schema(path="A folder inside your home; '.' for the top."),
        lambda files, args: files.list(args.get("path", ".")), False),
    "edit_file": (
        "Replace one exact passage of one of your files with new text.",
        _schema(path=_PATH, old="The passage to replace, exactly once in the file.",
                new="What to put in its place."),
        lambda files, args: files.edit(args.get("path"), args.get("old"), args.get("new")),
        True),
})


def run_file_tool(files: AgentFiles, tool: str, arguments: Any) -> ActionResult:
    """Run one file tool on a home; bad arguments are a failed result, never an exception."""
    try:
        args = _parser(tool)(arguments)
    except ToolInputError as exc:
        return ActionResult.fail(str(exc))
    if tool not in _OPS:
        return ActionResult.fail(f"{tool!r} is not a file tool")
    return _result(_OPS[tool][2](files, args), args)


def _result(done: FileResult, args: Mapping[str, Any]) -> ActionResult:
    text = done.message if not done.content else f"{done.message}\n{done.content}"
    data = {"path": args.get("path")}
    return ActionResult.ok(text, (), data) if done.ok else ActionResult.fail(text, data)


def _parser(tool: str) -> Callable[[Any], dict[str, Any]]:
    def parse(arguments: Any) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise ToolInputError(f"{tool} needs its arguments as an object")
        return dict(arguments)
    return parse


def _handler(op: FileOp) -> Handler:
    async def run(use: ToolUse, agent: str, tick: int, args: dict[str, Any]) -> ActionResult:
        files = use.files(agent)
        if files is None:
            return ActionResult.fail("you have no home folder in this world")
        return _result(op(files, args), args)
    return run


def _changed_path(arguments: Mapping[str, Any]) -> object:
    return arguments.get("path")


FILE_TOOLS: tuple[Tool, ...] = tuple(
    Tool(name, description, schema, _parser(name), _handler(op), Narration.AS_IS,
         _changed_path if changes else None, informs=not changes)
    for name, (description, schema, op, changes) in _OPS.items()
)
