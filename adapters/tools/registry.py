"""The tool registry: one declaration per tool, the one place a turn learns what a call does.

    TOOLS = ToolRegistry(*world_action_tools(), *FILE_TOOLS, RECALL_TOOL)
    specs = TOOLS.specs(max_actions=8)            # what every mind is offered
    result = await TOOLS.tool(call.name).call(call.arguments, use, agent, tick)
    told = TOOLS.tool(call.name).narration        # FRAMED by the narrator, or AS_IS

A tool says everything about itself: its name, the description and input schema a
model reads, how its arguments are parsed (a `ToolInputError` is a failed result,
never an exception), its handler, whether the narrator frames its result or it goes
back as it is, and which of the agent's files a call would change (so the engine can
save them first, adapters/file_undo.py). The engine runs every call through here and
names no tool, so adding one is a module and a line in adapters/tools/__init__.py.

Handlers reach the world through `ToolUse`, the port the engine implements
(engine/tool_use.py): the action engine, the agent's home folder, the stored past.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from adapters.agent_files import AgentFiles
from core.actions import Action, ActionResult
from core.failures import FailureReason
from services.mind import ToolSpec
from services.tool_input import ToolInputError, describe_value
from services.tool_specs import MAX_ACTIONS_MARK
from storage import Storage


class ToolUse(Protocol):
    """What a tool's handler may reach during a turn (the engine provides it)."""

    @property
    def storage(self) -> Storage:
        """The world's storage, for tools that read what is committed (recall)."""
        ...

    def act(self, agent: str, action: Action, tick: int) -> ActionResult:
        """Run one world action through the action engine."""
        ...

    def files(self, agent: str) -> AgentFiles | None:
        """The agent's home folder, sandboxed; None in a world without homes."""
        ...

    def time_of_day(self, tick: int) -> str:
        """How the world names the hour of `tick` ("morning of day 3")."""
        ...


class Narration(enum.Enum):
    """How a tool's result reaches the agent."""

    FRAMED = "framed"
    """The narrator sets the result in a scene of time, weather and place (world actions)."""
    AS_IS = "as_is"
    """The result's message goes back unchanged (the agent's own files, its memories)."""


Handler = Callable[[ToolUse, str, int, Any], "ActionResult | Awaitable[ActionResult]"]
"""(use, agent, tick, parsed input) -> the result, or an awaitable of it. A handler that
never waits (the world's actions: most calls) returns its result directly, which saves
a coroutine a call on the engine's busiest path."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool, whole: what a model is shown and what a call to it does."""

    name: str
    description: str
    """Addressed to the agent; `{max_actions}` is replaced by the per-turn action limit."""
    input_schema: Mapping[str, Any]
    parse: Callable[[Any], Any]
    """The call's raw arguments -> the handler's input; raises ToolInputError."""
    run: Handler
    narration: Narration = Narration.FRAMED
    changed_path: Callable[[Any], object] | None = None
    """Which of the agent's files a call (its raw arguments) would change; None for a
    tool that changes no file."""
    informs: bool = False
    """Its result is something the agent asked to learn, not a deed's confirmation: it is
    worth answering within the turn (services.mind.ToolSpec.informs)."""

    def spec(self, max_actions: int) -> ToolSpec:
        return ToolSpec(self.name, self.description.replace(MAX_ACTIONS_MARK, str(max_actions)),
                        self.input_schema, self.informs)

    async def call(self, arguments: Any, use: ToolUse, agent: str, tick: int) -> ActionResult:
        """Parse a call's arguments and run it; bad input is a failed result."""
        try:
            parsed = self.parse(arguments)
        except ToolInputError as exc:
            return ActionResult.fail(str(exc), reason=FailureReason.BAD_INPUT)
        result = self.run(use, agent, tick, parsed)
        return result if type(result) is ActionResult else await result  # type: ignore[misc]


class ToolRegistry:
    """Every tool a world offers, by name, in the order minds are shown them."""

    def __init__(self, *tools: Tool) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are called {tool.name!r}")
            self._tools[tool.name] = tool

    def with_tools(self, *tools: Tool) -> ToolRegistry:
        """This registry with more tools after its own."""
        return ToolRegistry(*self._tools.values(), *tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return self.tool(name) is not None

    @property
    def by_name(self) -> Mapping[str, Tool]:
        """Every tool by its name (not to be changed: a registry is made whole)."""
        return self._tools

    def tool(self, name: object) -> Tool | None:
        try:
            return self._tools.get(name)  # type: ignore[call-overload]
        except TypeError:  # a name no text could be (a model's list, say)
            return None

    def specs(self, max_actions: int) -> tuple[ToolSpec, ...]:
        """What every mind is offered: each tool's name, description and input schema."""
        return tuple(tool.spec(max_actions) for tool in self._tools.values())

    def named(self, narration: Narration) -> frozenset[str]:
        """The names of the tools whose results reach the agent this way."""
        return frozenset(t.name for t in self._tools.values() if t.narration is narration)

    def changing_files(self) -> frozenset[str]:
        """The names of the tools that may change an agent's files."""
        return frozenset(t.name for t in self._tools.values() if t.changed_path is not None)

    def unknown(self, name: object) -> ActionResult:
        """What a call of a tool that does not exist comes to: the tools that do."""
        known = ", ".join(sorted(self._tools))
        return ActionResult.fail(
            f"there is no tool called {describe_value(name)}; tools are: {known}",
            reason=FailureReason.BAD_INPUT)
