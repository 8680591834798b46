"""An agent's own past as memories it can search: what it did, saw, said and heard.

Everything comes from what the database already keeps for the agent and nothing
else: its turns (each action's narrated outcome, and for a language-model mind the
perceptions it was shown), and the conversations it took part in, only while it
was there. Another agent's doings are never among them.

Importance is fixed by what a memory is: making a shelter or a new thing, naming a
place or a conversation matters more than a step on grass; a failure less than a
success.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.privacy import shown_action
from core.recall import Memory
from storage import Storage

TURNS_SEARCHED = 2_000
"""The newest turns an agent's memories are drawn from (older ones are kept, not searched)."""

IMPORTANCE: Mapping[str, float] = {
    "build_shelter": 1.0, "place_wall": 0.7, "place_door": 0.7, "remove_wall": 0.5,
    "work": 0.7, "combine": 0.7, "apply": 0.7, "name_place": 0.8, "write_sign": 0.7,
    "read_sign": 0.6, "invite": 0.6, "accept_invite": 0.6, "decline_invite": 0.5,
    "speak": 0.5, "leave_conversation": 0.4, "give": 0.6, "take": 0.4, "drop": 0.3,
    "gather": 0.4, "examine": 0.4, "sense_others": 0.4, "journey": 0.3, "walk": 0.1,
    "sleep": 0.1,
}
"""What doing each action is worth remembering (others: 0.3)."""
SAW, HEARD, SAID = 0.3, 0.6, 0.5
SAW_CHARS = 600
"""How much of a perception is kept as one memory (its opening: time, place, sights)."""


async def memories_of(storage: Storage, agent: str) -> list[Memory]:
    """The agent's memories, oldest first."""
    found: list[Memory] = []
    for turn in reversed(await storage.engine.turns_of(agent, TURNS_SEARCHED)):
        found.extend(_from_turn(turn.tick, turn.record))
    oldest = found[0].tick if found else 0
    for tick, speaker, message in reversed(await storage.conversations.lines_with(agent)):
        if tick < oldest:
            continue
        if speaker == agent:
            found.append(Memory(tick, "said", f'You said: "{message}"', SAID))
        else:
            found.append(Memory(tick, "heard", f'{speaker} said: "{message}"', HEARD))
    found.sort(key=lambda m: m.tick)
    return found


def _from_turn(tick: int, record_json: str) -> list[Memory]:
    try:
        record = json.loads(record_json)
    except ValueError:
        return []
    if not isinstance(record, Mapping):
        return []
    out = [Memory(tick, "saw", text[:SAW_CHARS], SAW) for text in _perceptions(record)]
    for action in record.get("actions", ()):
        if not isinstance(action, Mapping) or action.get("tool") == "recall":
            continue
        tool, args = str(action.get("tool", "")), action.get("args")
        # What the agent read in its journal is its own: not a memory Hearth keeps of it.
        text = shown_action(tool, args if isinstance(args, Mapping) else {},
                            str(action.get("text", "")))[1].strip()
        if not text:
            continue
        worth = IMPORTANCE.get(tool, 0.3) * (1.0 if action.get("ok") else 0.5)
        out.append(Memory(tick, "did", text, worth))
    return out


def _perceptions(record: Mapping[str, Any]) -> list[str]:
    """Perceptions a language-model mind was shown this turn (kept in its record)."""
    mind = record.get("mind")
    if not isinstance(mind, Mapping):
        return []
    seen = []
    for message in mind.get("messages", ()) or ():
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        for block in message.get("content", ()) or ():
            if (isinstance(block, Mapping) and block.get("type") == "text"
                    and str(block.get("text", "")).startswith("It is ")):
                seen.append(str(block["text"]))
    return seen
