"""Everyone writes something: at a landmark someone already signed, a first name instead."""

from __future__ import annotations

import pytest

from adapters.offline_mind import OfflineMind
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    calls_of,
    landmark,
    perceive,
    play,
    sign,
    start,
)


@pytest.mark.parametrize("tick", [3, 4, 5, 6, 7])
async def test_one_who_never_wrote_names_a_landmark_that_bears_someone_elses_sign(
    tick: int,
) -> None:
    at, spring = (40, 40), (40, 39)
    mind = OfflineMind(7, PERSONALITIES)
    log = await play(mind, start(perceive("River", tick, at, objects=(sign(spring, at),),
                                          landmarks=(landmark("the Spring", spring, at),))))
    calls = calls_of(log)
    assert not any(name == "write_sign" for name, _ in calls)  # a sign stands there already
    assert any(name == "name_place" for name, _ in calls), calls
