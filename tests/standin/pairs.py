"""Two pairs of agents far apart, and the stand-in's agent they live by: the world the
concurrent-turns tests (issue 40) live, in-process and as real processes.

`pair_up(db)` puts the first two agents (by name) on one spot and the last two on
another, far away, each with wood to work; `pair_agent` is a `behaviour` for
StrictMessagesApi that decides from who the agent is and how long its history is
alone, never from the whole request: the stand-in numbers its reply and call ids as
requests arrive, so those differ with the order replies come back in.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from tests.standin.agent import DIRECTIONS, Plan, Request, thinking_length

NAMES: list[str] = []
"""The agents, by name, as `pair_up` found them: the pairs are 0-1 and 2-3."""


def pair_up(db_path: Path) -> None:
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT name, x, y FROM agents ORDER BY name").fetchall()
        NAMES[:] = [name for name, _, _ in rows]
        (_, ax, ay), (b, _, _), (_, cx, cy), (d, _, _) = rows
        db.execute("UPDATE agents SET x = ?, y = ? WHERE name = ?", (ax, ay, b))
        db.execute("UPDATE agents SET x = ?, y = ? WHERE name = ?", (cx, cy, d))
        db.executemany("INSERT OR REPLACE INTO inventory_stacks VALUES (?, 'wood', 60)",
                       [(name,) for name in NAMES])  # to craft and build with
        db.commit()
    finally:
        db.close()


def pair_agent(request: Request) -> Plan:
    """On a fresh perception: accept an invitation if there is one, say something
    (only in a conversation can it be), a step, what can be gathered there, wood split
    into planks or carved into a bowl (an item of its own: a new id), a shelter when the
    planks suffice (a structure: a new id), a sign naming who wrote it and when, and an
    invitation to the partner; after the results, the turn ends."""
    if request.tools and request.fresh:
        who = request.body["system"][0]["text"].split(".", 1)[0].removeprefix("You are ")
        when = len(request.body["messages"])
        step = random.Random(f"{who}:{when}").choice(DIRECTIONS)
        partner = NAMES[NAMES.index(who) ^ 1]
        craft = "carve" if (when // 4) % 3 == 0 else "split"
        calls = [("accept_invite", {}), ("speak", {"message": f"{who} says hello ({when})"}),
                 ("walk", {"direction": step}), ("gather", {}),
                 ("work", {"item": "wood", "technique": craft}), ("build_shelter", {}),
                 ("write_sign", {"text": f"{who} was here ({when})"}),
                 ("invite", {"invitee": partner})]
        return Plan(thinking_length(request, 0.1), "Hello, a step, and a sign.", calls)
    return Plan(thinking_length(request, 0.1), "That will do.")
