"""No word lost (issue 27): through the real engine, world, SQLite and anthropic SDK, with
the strict Messages stand-in (tests/standin/) playing a model scripted to invite,
accept, join, speak, and speak and leave in the same turn.

What is checked is what the models were sent: every line spoken reaches, in their next
prompt, everyone who was in the conversation when it was said; the one left behind is
told "X left; the conversation ended"; no line of a private conversation reaches anyone
outside it; and `conversation_participants` holds exactly the membership the events
describe (joined, left), members who came and went within one tick included.

The model decides from the world itself (an oracle: the test's own reading of the
conversation service), so the script does not depend on the wording of the perception;
only the assertions read the text, as a model would.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_models import check_models
from config import HearthConfig
from services.world_setup import plan_world, write_world
from storage import Storage
from tests.integration.ticks.conftest import SEED
from tests.messages_standin import Plan, Request, StrictMessagesApi, simple_agent

SONNET = "claude-sonnet-5-5"
TODAY = datetime.date(2026, 11, 26)
_NAME = re.compile(r"You are (\w+)\.")
_MARK = re.compile(r"\[L\d+\]")


@pytest.fixture
async def small_world(data_dir: Path, config: HearthConfig) -> Path:
    """Four agents on one cell (so they always see each other and act in one cluster)."""
    world = plan_world(config, seed=SEED, size=(32, 24), agent_count=4)
    here = world.agents[0].position
    world = dataclasses.replace(
        world, agents=tuple(a.with_position(here) for a in world.agents))
    async with Storage(data_dir) as storage:
        await write_world(storage, world, config, None)
    return data_dir


class Script:
    """The model's part. On a fresh perception it looks at the world (the oracle) and:
    accepts a pending invitation; in a conversation says a marked line, and about half the
    time leaves in the same reply; when free, joins a public conversation in sight (and
    at times says a line and leaves again at once) or invites someone free, privately or
    publicly. After the results it ends its turn."""

    def __init__(self) -> None:
        self.engine: Any = None
        self.log: list[tuple[int, str | None, bool, int, str]] = []
        """(request index, agent, a fresh turn request, tick, the newest message's text)"""
        self.said: dict[str, int] = {}
        """line mark -> index of the request whose reply said it"""
        self.lines = 0

    def __call__(self, request: Request) -> Plan:
        index = len(self.log)
        system = request.body.get("system") or []
        system_text = system if isinstance(system, str) else " ".join(
            b.get("text", "") for b in system if isinstance(b, Mapping))
        found = _NAME.search(system_text)
        name = found.group(1) if found else None
        fresh = bool(request.tools) and request.fresh
        tick = self.engine.sim.world.tick
        self.log.append((index, name, fresh, tick, _text_of(request.last_blocks)))
        if not request.tools or name is None:
            return simple_agent(request)  # compaction's summary
        if not fresh:
            return Plan(0, "That is all for now.")
        calls = self._decide(name, index)
        return Plan(0, "I act.", calls) if calls else Plan(0, "I wait.")

    def _line(self, name: str, index: int) -> tuple[str, Mapping[str, Any]]:
        self.lines += 1
        mark = f"[L{self.lines}]"
        self.said[mark] = index
        return "speak", {"message": f"{name} here, saying line {mark}"}

    def _decide(self, name: str, index: int) -> list[tuple[str, Mapping[str, Any]]]:
        sim = self.engine.sim
        talk, agents = sim.conversations, sim.agents
        tick = sim.world.tick
        rng = random.Random(f"{name}:{tick}:{index}")
        conv = talk.get_conversation_for_agent(name)
        invitation = talk.pending_invitation_for(name)
        if conv is None and invitation is not None and not invitation.is_expired(tick):
            return [("accept_invite", {})]
        if conv is not None:
            calls = [self._line(name, index)]
            roll = rng.random()
            if roll < 0.5:
                calls.append(("leave_conversation", {}))  # said, then gone, in one reply
            elif roll < 0.7:
                calls.append(self._line(name, index))
            elif roll < 0.85:
                free = [a.name for a in agents.get_all_agents() if a.name != name
                        and not talk.is_talking(a.name) and not talk.has_pending_invitation(a.name)]
                if free:
                    calls.append(("invite", {"invitee": rng.choice(sorted(free))}))
            return calls
        public = sorted(c.created_by for c in talk.active_conversations()
                        if c.privacy.value == "public" and c.created_by in c.participants)
        if public and rng.random() < 0.5:
            calls = [("join_conversation", {"participant": rng.choice(public)})]
            if rng.random() < 0.5:  # in and out within one turn
                calls += [self._line(name, index), ("leave_conversation", {})]
            return calls
        free = sorted(a.name for a in agents.get_all_agents() if a.name != name
                      and not talk.is_talking(a.name) and not talk.has_pending_invitation(a.name))
        if free:
            return [("invite", {"invitee": rng.choice(free),
                                "privacy": rng.choice(["private", "public"])})]
        return []


def _text_of(blocks: list[Any]) -> str:
    out = []
    for block in blocks:
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            content = block.get("content")
            out.append(content if isinstance(content, str) else " ".join(
                c.get("text", "") for c in content or [] if isinstance(c, Mapping)))
    return "\n".join(out)


def _replay(db: sqlite3.Connection):
    """From the events alone: each line (mark, speaker, conversation, privacy, members
    present when said), the endings (remaining member, who left), and the membership
    record per (conversation, agent): (latest joining tick, leaving tick or None)."""
    members: dict[str, set[str]] = {}
    privacy: dict[str, str] = {}
    record: dict[tuple[str, str], tuple[int, int | None]] = {}
    lines, endings = [], []
    last_left: dict[str, str] = {}
    for tick, kind, data in db.execute(
            "SELECT tick, kind, data FROM events WHERE kind LIKE 'conversation_%' ORDER BY seq"):
        event = json.loads(data)
        cid = event["conversation_id"]
        if kind == "conversation_started":
            members[cid] = set(event["participants"])
            privacy[cid] = event["privacy"]
            for name in event["participants"]:
                record[cid, name] = (tick, None)
        elif kind == "conversation_joined":
            members[cid].add(event["agent"])
            record[cid, event["agent"]] = (tick, None)
        elif kind == "conversation_left":
            members[cid].discard(event["agent"])
            record[cid, event["agent"]] = (record[cid, event["agent"]][0], tick)
            last_left[cid] = event["agent"]
        elif kind == "conversation_ended":
            endings.extend((name, last_left[cid], tick) for name in sorted(members[cid]))
        elif kind == "conversation_turn":
            mark = _MARK.search(event["message"])
            assert mark is not None
            lines.append((mark.group(0), event["agent"], cid, privacy[cid],
                          frozenset(members[cid])))
    return lines, endings, record


async def _run(make_engine, small_world: Path, ticks: int) -> dict[str, int]:
    script = Script()
    api = StrictMessagesApi(behaviour=script)
    client = api.client()
    async with Storage(small_world) as storage:
        names = [a.name for a in await storage.agents.get_all_agents()]
    lineup = await check_models(client, {SONNET: names}, TODAY)
    profiles = {n: ClaudeProfile(SONNET, "Talkative.", "low") for n in names}
    async with make_engine(ClaudeMind(client, profiles, lineup=lineup)) as engine:
        script.engine = engine
        for _ in range(ticks):
            await engine.tick_once()
    assert api.refused == []

    db = sqlite3.connect(small_world / "world.db")
    try:
        lines, endings, record = _replay(db)
        stored = {(c, n): (j, lt) for c, n, j, lt in db.execute(
            "SELECT conversation_id, agent_name, joined_tick, left_tick "
            "FROM conversation_participants")}
        conversations = db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0]
        in_and_out = db.execute(
            "SELECT COUNT(*) FROM conversation_participants WHERE left_tick = joined_tick"
        ).fetchone()[0]
    finally:
        db.close()

    seen_by: dict[str, list[tuple[int, str]]] = {}
    turn_at: dict[tuple[str, int], int] = {}
    for i, n, fresh, tick, text in script.log:
        if fresh and n is not None:
            seen_by.setdefault(n, []).append((i, text))
            turn_at[n, tick] = i

    def next_prompt(name: str, after: int) -> str | None:
        return next((text for i, text in seen_by.get(name, ()) if i > after), None)

    figures = dict.fromkeys(("lines", "deliveries", "delivered", "lost", "pending",
                             "leaks", "endings", "endings_told"), 0)
    figures["lines"] = len(lines)
    for mark, speaker, _, private, present in lines:
        said_at = script.said[mark]
        for member in sorted(present - {speaker}):
            figures["deliveries"] += 1
            prompt = next_prompt(member, said_at)
            if prompt is None:
                figures["pending"] += 1  # the run ended before that member's next turn
            elif mark in prompt:
                figures["delivered"] += 1
            else:
                figures["lost"] += 1
        if private == "private":
            for _, name, _, _, text in script.log:
                if mark in text and name not in present:
                    figures["leaks"] += 1
    for remaining, leaver, tick in endings:
        prompt = next_prompt(remaining, turn_at[leaver, tick])
        if prompt is None:
            continue  # the run ended first
        figures["endings"] += 1
        figures["endings_told"] += f"{leaver} left; the conversation ended." in prompt
    figures["conversations"] = conversations
    figures["participant_rows"] = len(stored)
    figures["members_from_events"] = len(record)
    figures["in_and_out_within_a_tick"] = in_and_out
    figures["said_then_left"] = sum(
        1 for (mark, speaker, cid, _, _) in lines
        if (cid, speaker) in record and record[cid, speaker][1] is not None
        and turn_at.get((speaker, record[cid, speaker][1])) == script.said[mark])
    assert stored == record, "conversation_participants differs from the events"
    return figures


def _check(figures: dict[str, int]) -> None:
    assert figures["lines"] > 50 and figures["conversations"] > 5, figures
    assert figures["lost"] == 0, figures
    assert figures["leaks"] == 0, figures
    assert figures["delivered"] + figures["pending"] == figures["deliveries"], figures
    assert figures["endings"] > 0 and figures["endings_told"] == figures["endings"], figures
    assert figures["in_and_out_within_a_tick"] > 0, figures


async def test_sixty_ticks_of_talk_lose_no_word(make_engine, small_world: Path) -> None:
    figures = await _run(make_engine, small_world, 60)
    print(figures)
    _check(figures)


@pytest.mark.slow
async def test_three_hundred_ticks_of_talk_lose_no_word(make_engine, small_world: Path) -> None:
    figures = await _run(make_engine, small_world, 300)
    print(figures)
    _check(figures)
