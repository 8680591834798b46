"""Folding captures in turn order: what a group commit writes for a batch of turns."""

from __future__ import annotations

from core.agent import Agent
from core.objects import Sign
from core.places import NamedPlace
from core.types import AgentName, Position
from core.world import WorldState
from services.persistence import Capture

ASH = AgentName("Ash")


def _agent(x: int) -> Agent:
    return Agent(ASH, "m", "p", Position(x, 0))


def _sign(oid: str, text: str) -> Sign:
    return Sign(oid, Position(1, 1), ASH, 3, text)


def test_later_values_win_and_untouched_ones_stay() -> None:
    total = Capture(agents={ASH: _agent(1)}, world_state=WorldState(8, 8, 1, tick=1),
                    spent={Position(0, 0): (1, 1)})
    total.merge(Capture(agents={ASH: _agent(2)}))
    total.merge(Capture())
    assert total.agents[ASH].position == Position(2, 0)
    assert total.world_state.tick == 1 and total.spent == {Position(0, 0): (1, 1)}
    total.merge(Capture(world_state=WorldState(8, 8, 1, tick=2),
                        places={"pond": NamedPlace("Pond", Position(2, 2), ASH, 2)}))
    assert total.world_state.tick == 2 and list(total.places) == ["pond"]


def test_a_later_delete_cancels_an_earlier_save_and_the_other_way_round() -> None:
    total = Capture(objects_saved={"a": _sign("a", "one"), "b": _sign("b", "two")})
    total.merge(Capture(objects_deleted={"a"}))
    assert set(total.objects_saved) == {"b"} and total.objects_deleted == {"a"}
    total.merge(Capture(objects_saved={"a": _sign("a", "again")}))
    assert total.objects_saved["a"].text == "again" and total.objects_deleted == set()
    total.merge(Capture(structures_deleted={"s1"}))
    total.merge(Capture(structures_saved={}))
    assert total.structures_deleted == {"s1"}


def test_lists_follow_in_order() -> None:
    total = Capture(turns=["first"])  # type: ignore[list-item]
    total.merge(Capture(turns=["second"]))  # type: ignore[list-item]
    total.merge(Capture())
    total.merge(Capture(turns=["third"], invitations=["inv"]))  # type: ignore[list-item]
    assert total.turns == ["first", "second", "third"] and total.invitations == ["inv"]
