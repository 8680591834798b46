"""Every tool an agent is offered, registered in one place (see registry.py).

To add a tool, write its module here (a `Tool`: name, description, input schema,
parsing, handler, narration, the files it changes) and add it to `TOOLS` below: the
minds are offered it, the engine runs and records it, the narrator tells it.

    registry.py   Tool, ToolRegistry, Narration and ToolUse (the port the engine implements)
    world.py      the world's actions (services/action_engine.py runs them)
    files.py      the agent's own files
    recall.py     the agent's memories
"""

from adapters.tools.files import FILE_TOOLS
from adapters.tools.recall import RECALL_TOOL
from adapters.tools.registry import Narration, Tool, ToolRegistry, ToolUse
from adapters.tools.world import world_action_tools

TOOLS = ToolRegistry(
    *world_action_tools(),
    *FILE_TOOLS,
    RECALL_TOOL,
)
"""The tools of every world, in the order minds are shown them."""

__all__ = ["TOOLS", "Narration", "Tool", "ToolRegistry", "ToolUse"]
