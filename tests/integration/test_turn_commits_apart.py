"""A turn's commit holds what that turn changed and nothing another turn did (issue 40).

A conversation of four spans any distance, so the turns of two far clusters can change it at
once. Here Sage leaves it in a turn that has not ended (its change is in memory,
uncaptured), while River leaves it in a turn that ends and is written, through the
same capture and write a commit uses, into a real SQLite file. The file must hold
River's leaving and not Sage's: were the process to die before Sage's turn is
written, the world on disk would otherwise hold half of Sage's turn.
"""

from __future__ import annotations

import sqlite3

import pytest

from config import HearthConfig, load_config
from core.actions import AcceptInviteAction, InviteAction, LeaveConversationAction
from services.changes import ChangeSet, collecting
from services.persistence import capture, write_capture
from services.simulation import flush, load_simulation
from services.world_setup import plan_world, write_world
from storage import Storage


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


async def test_a_commit_holds_only_its_own_turns_conversation_rows(tmp_path, config) -> None:
    plan = plan_world(config, seed=11, size=(80, 80), agent_count=4)
    async with Storage(tmp_path) as storage:
        await write_world(storage, plan, config)
        sim = await load_simulation(storage, config)
        ember, sage, river, fourth = (a.name for a in plan.agents)
        here = sim.agents.require(ember).position
        for name in (sage, river, fourth):
            sim.agents.update_position(name, here)
        engine = sim.engine
        done = [step for guest in (sage, river, fourth)
                for step in (engine.execute_now(ember, InviteAction(guest), 1),
                             engine.execute_now(guest, AcceptInviteAction(), 1))]
        assert all(r.success for r in done), [r.message for r in done if not r.success]
        sim.world.set_tick(2)
        async with storage.unit_of_work() as uow:  # the conversation, as committed
            await flush(sim, uow)
            await uow.commit()

        sages_turn, rivers_turn = ChangeSet(), ChangeSet()
        with collecting(sages_turn):  # Sage's turn: leaves, and has not ended yet
            assert engine.execute_now(sage, LeaveConversationAction(), 2).success
        with collecting(rivers_turn):  # River's turn, far away: leaves, and ends
            assert engine.execute_now(river, LeaveConversationAction(), 2).success
            rivers = capture(sim, rivers_turn)
        async with storage.unit_of_work() as uow:
            await write_capture(rivers, uow)
            await uow.commit()

    db = sqlite3.connect(tmp_path / "world.db")
    try:
        left = dict(db.execute("SELECT agent_name, left_tick FROM conversation_participants"))
        ended = db.execute("SELECT ended_tick FROM conversations").fetchall()
    finally:
        db.close()
    assert left[river] == 2  # River's own turn
    assert left[sage] is None  # Sage's turn is not River's to write
    assert left[ember] is None and left[fourth] is None
    assert ended == [(None,)]  # two are still in it
