"""The engine's side of the tool registry: it runs and narrates every call of a turn.

    tools = TurnTools(TOOLS, sim, storage, homes, file_undo, committer.flush_writes,
                      narrator)
    result = await tools.execute(name, tick, call)
    text = await tools.narrate(name, tick, result, call)

It is the `ToolUse` a tool's handler reaches the world through (the action engine,
the agent's home folder, the stored past), and asks the registry, never a tool's
name, what a call does: a call that changes the agent's files has them saved first
(adapters/file_undo.py), a tool told as it is skips the narrator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from adapters.agent_files import AgentFiles
from adapters.file_undo import FileUndoLog
from adapters.tools import Narration, ToolRegistry
from core.actions import Action, ActionResult
from services.mind import ToolCall
from services.narrator import NarrationContext, Narrator, sheltered
from services.simulation import Simulation
from storage import Storage
from storage.homes import AgentHomes


class TurnTools:
    """Runs the calls of the turns of one loaded world (the registry's `ToolUse`)."""

    def __init__(
        self,
        registry: ToolRegistry,
        sim: Simulation,
        storage: Storage,
        homes: AgentHomes | None,
        file_undo: FileUndoLog,
        flush_writes: Callable[[], Awaitable[object]],
        narrator: Narrator,
    ) -> None:
        self.registry = registry
        self.sim = sim
        self._storage = storage
        self.homes = homes
        self.file_undo = file_undo
        self.flush_writes = flush_writes
        """Lands the writes handed to the committer (a turn's file log waits for it)."""
        self.narrator = narrator
        self._narrate_now = getattr(narrator, "narrate_now", None)
        """The narrator's synchronous form, if it has one: one coroutine less a call."""
        self._as_is = registry.named(Narration.AS_IS)
        self._files: dict[str, AgentFiles] = {}
        self.act: Callable[[str, Action, int], ActionResult] = sim.engine.execute_now
        """`ToolUse.act`: the action engine's own entry, bound once (a frame less a call)."""

    # ------------------------------------------------------------------ ToolUse

    @property
    def storage(self) -> Storage:
        return self._storage


    def files(self, agent: str) -> AgentFiles | None:
        if self.homes is None:
            return None
        files = self._files.get(agent)
        if files is None:
            files = self._files[agent] = AgentFiles(self.homes.path(agent))
        return files

    def time_of_day(self, tick: int) -> str:
        return str(self.sim.world.time_of_day(tick))

    # ------------------------------------------------------------------ a turn's calls

    async def execute(self, name: str, tick: int, call: ToolCall) -> ActionResult:
        tool = self.registry.tool(call.name)  # the one place that knows every tool
        if tool is None:
            return self.registry.unknown(call.name)
        if (tool.changed_path is not None and isinstance(call.arguments, Mapping)
                and (files := self.files(name)) is not None):
            if self.file_undo.guards_earlier_turn(name, tick):
                # The log holds one turn: that turn's write must land before this
                # turn's change replaces it (only when writing behind).
                await self.flush_writes()
            self.file_undo.before_change(name, tick, files, tool.changed_path(call.arguments))
        return await tool.call(call.arguments, self, name, tick)

    async def narrate(self, name: str, tick: int, result: ActionResult, call: ToolCall) -> str:
        if call.name in self._as_is:
            return result.message
        world = self.sim.world
        agent = self.sim.agents.get_agent(name)
        position = agent.position if agent is not None else None
        ctx = NarrationContext(
            name, tick, position, world.time_of_day(tick).period, world.weather, call.name,
            position is not None and sheltered(world.structure_at, position, result.events),
        )
        if self._narrate_now is not None:
            return self._narrate_now(result, ctx)
        return await self.narrator.narrate(result, ctx)
