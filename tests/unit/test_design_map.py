"""DESIGN.md's "Where a tool lives" table is true of the code: every registered tool is
in it once, declared in the module it names and handled in the module it names, so a
newcomer finds any tool in one hop (issue 31)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from adapters.agent_files import AgentFiles
from adapters.tools import TOOLS
from core.actions import ACTION_TYPES
from services.action_engine import ActionEngine
from services.recall import memories_of

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[str, tuple[str, list[str]]]:
    """tool -> (declared in, [handled in, ...]) as DESIGN.md's table gives them."""
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    section = text.split("**Where a tool lives.**", 1)[1].split("\n\n", 2)[1]
    rows: dict[str, tuple[str, list[str]]] = {}
    for line in section.splitlines()[2:]:
        tools, declared, handled = (cell.strip() for cell in line.strip("|").split("|"))
        paths = re.findall(r"`([^`]+)`", handled)
        for tool in (t.strip() for t in tools.split(",")):
            assert tool not in rows, f"{tool} is in the table twice"
            rows[tool] = (declared.strip("`"), paths)
    return rows


def _path(module: object) -> str:
    return str(Path(inspect.getsourcefile(module)).resolve().relative_to(ROOT))  # type: ignore[arg-type]


def test_every_registered_tool_is_in_the_table_and_nothing_else_is() -> None:
    assert set(_table()) == {tool.name for tool in TOOLS}


def test_each_tool_is_declared_where_the_table_says() -> None:
    for name, (declared, _) in _table().items():
        tool = TOOLS.tool(name)
        assert tool is not None
        assert _path(inspect.getmodule(tool.run)) == declared, name


def test_each_tool_is_handled_where_the_table_says() -> None:
    for name, (_, handled) in _table().items():
        for path in handled:
            assert (ROOT / path).is_file(), f"{path} (for {name}) does not exist"
        if name in ACTION_TYPES:  # ActionEngine's handler for `name` is `_<name>`
            handler = getattr(ActionEngine, f"_{name}")
            assert _path(inspect.getmodule(handler)) == handled[0], name
        elif name == "recall":
            assert _path(inspect.getmodule(memories_of)) in handled
        else:
            assert _path(inspect.getmodule(AgentFiles)) in handled, name


def test_every_module_over_500_lines_is_one_design_says_why() -> None:
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    reasons = text.split("Modules stay under 500 lines.", 1)[1].split("\n\n", 1)[0]
    kept = set(re.findall(r"`([\w/]+\.py)` \(\d+:", reasons))
    long = {str(path.relative_to(ROOT)) for path in ROOT.glob("**/*.py")
            if not {".venv", "tests", "build"} & set(path.relative_to(ROOT).parts)
            and sum(1 for _ in path.open(encoding="utf-8")) > 500}
    assert long <= kept, f"over 500 lines with no reason in DESIGN.md: {sorted(long - kept)}"
    assert kept, "the paragraph names no module: the test reads the wrong place"
