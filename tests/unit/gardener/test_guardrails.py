"""Guardrails: how much the Gardener may change, judged where the change is made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from core.gardener import (
    Applied,
    Caps,
    Intervention,
    Level,
    NoIntervention,
    Regrowth,
    RevealLandmark,
    Verdict,
    WeatherChange,
    WorldHappening,
    judge,
)
from core.terrain import Weather
from core.types import Position

CAPS = Caps()
TICK = 1000
LANDMARKS: dict[str, Position] = {"Old Oak": Position(3, 3), "Spire": Position(90, 90)}

FAR = [Position(0, 0), Position(100, 0), Position(200, 0), Position(300, 0),
       Position(400, 0)]
"""Spots further apart than `area_cells`, so the area rule never joins them."""

PER_CYCLE = [(Level.HEALTHY, 1), (Level.WATCH, 1), (Level.WARNING, 2), (Level.CRITICAL, 3)]


def verdict(intervention: Intervention, *, cycle: int = 7, level: Level = Level.HEALTHY,
            tick: int = TICK, applied: Sequence[Applied] = (),
            landmarks: Mapping[str, Position] = LANDMARKS, caps: Caps = CAPS) -> Verdict:
    return judge(intervention, cycle=cycle, level=level, tick=tick, applied=applied,
                 landmarks=landmarks, caps=caps)


def accepted(intervention: Intervention, **kwargs: object) -> None:
    said = verdict(intervention, **kwargs)  # type: ignore[arg-type]
    assert said == Verdict(True, "within the guardrails")


def refused(intervention: Intervention, phrase: str, **kwargs: object) -> str:
    said = verdict(intervention, **kwargs)  # type: ignore[arg-type]
    assert not said.accepted
    assert phrase in said.reason, said.reason
    return said.reason


def regrowth(at: Position, radius: int = 2) -> Regrowth:
    return Regrowth(at, radius)


def event(at: Position, radius: int = 3, text: str = "A fox runs by.") -> WorldHappening:
    return WorldHappening(at, radius, text)


def reveal(at: Position, radius: int = 10, name: str = "Old Oak") -> RevealLandmark:
    return RevealLandmark(name, at, radius)


def done(kind: str, at: Position | None = None, *, tick: int = TICK,
         cycle: int = 7) -> Applied:
    return Applied(tick, cycle, kind, at)


# ---------------------------------------------------------------- verdicts and caps


def test_verdicts() -> None:
    assert Verdict.yes() == Verdict(True, "within the guardrails")
    assert Verdict.no("too much") == Verdict(False, "too much")


def test_the_default_caps() -> None:
    assert CAPS.per_cycle == (1, 1, 2, 3)
    assert CAPS.weather_every_ticks == 24
    assert CAPS.area_cells == 40
    assert CAPS.area_every_ticks == 48
    assert CAPS.event_radius == 12
    assert CAPS.event_text_chars == 280
    assert CAPS.regrowth_radius == 5
    assert CAPS.reveal_radius == 60


@pytest.mark.parametrize("per_cycle", [(1, 1, 2), (1, 1, 2, 3, 4), (), (1, -1, 2, 3),
                                       (-1, 0, 0, 0)])
def test_caps_refuse_a_bad_per_cycle(per_cycle: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="per_cycle"):
        Caps(per_cycle=per_cycle)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["weather_every_ticks", "area_cells", "area_every_ticks",
                                   "event_radius", "event_text_chars", "regrowth_radius",
                                   "reveal_radius"])
def test_caps_refuse_a_negative_cap(field: str) -> None:
    with pytest.raises(ValueError, match="every cap must be 0 or more"):
        Caps(**{field: -1})  # type: ignore[arg-type]
    assert getattr(Caps(**{field: 0}), field) == 0  # type: ignore[arg-type]


def test_caps_accept_zero_everywhere() -> None:
    caps = Caps(per_cycle=(0, 0, 0, 0), weather_every_ticks=0, area_cells=0,
                area_every_ticks=0, event_radius=0, event_text_chars=0, regrowth_radius=0,
                reveal_radius=0)
    assert caps.per_cycle == (0, 0, 0, 0)


# ---------------------------------------------------------------- "none"


@pytest.mark.parametrize("level", list(Level))
def test_none_is_always_accepted(level: Level) -> None:
    crowded = [done("regrowth", FAR[i]) for i in range(4)] + [done("weather")]
    accepted(NoIntervention(), level=level, applied=crowded)
    accepted(NoIntervention(), level=level, caps=Caps(per_cycle=(0, 0, 0, 0)))


@pytest.mark.parametrize(("level", "allowed"), PER_CYCLE)
def test_none_is_never_counted(level: Level, allowed: int) -> None:
    nothing = [done("none") for _ in range(5)]
    earlier = [done("regrowth", FAR[i]) for i in range(allowed - 1)]
    accepted(regrowth(FAR[allowed - 1]), level=level, applied=nothing + earlier)
    refused(regrowth(FAR[allowed]), f"this one has had {allowed}", level=level,
            applied=nothing + earlier + [done("regrowth", FAR[allowed - 1])])


# ---------------------------------------------------------------- per cycle


@pytest.mark.parametrize(("level", "allowed"), PER_CYCLE)
def test_a_cycle_gets_its_levels_share(level: Level, allowed: int) -> None:
    earlier = [done("regrowth", FAR[i]) for i in range(allowed - 1)]
    accepted(regrowth(FAR[allowed - 1]), level=level, applied=earlier)
    full = earlier + [done("regrowth", FAR[allowed - 1])]
    plural = "s" if allowed != 1 else ""
    why = refused(regrowth(FAR[allowed]), f"a {level.name} cycle may have {allowed} "
                  f"intervention{plural}, and this one has had {allowed}",
                  level=level, applied=full)
    assert why.startswith("a ")


@pytest.mark.parametrize(("level", "allowed"), PER_CYCLE)
def test_other_cycles_do_not_count(level: Level, allowed: int) -> None:
    others = [done("regrowth", FAR[i], cycle=6) for i in range(allowed)]
    others += [done("event", FAR[i], cycle=8) for i in range(allowed)]
    accepted(regrowth(Position(0, 300)), cycle=7, level=level, applied=others)


def test_a_cycle_is_counted_by_its_id_not_its_tick() -> None:
    long_ago = [done("regrowth", FAR[0], tick=10, cycle=7)]
    refused(regrowth(FAR[1]), "this one has had 1", cycle=7, applied=long_ago)
    same_tick = [done("regrowth", FAR[0], cycle=6)]
    accepted(regrowth(FAR[1]), cycle=7, applied=same_tick)


def test_every_kind_counts_against_the_cycle() -> None:
    for before in (done("weather", tick=1), done("event", FAR[0]), done("regrowth", FAR[0]),
                   done("reveal_landmark", FAR[0])):
        refused(regrowth(FAR[3]), "a HEALTHY cycle may have 1 intervention", applied=[before])
    refused(WeatherChange(Weather.RAINY), "may have 1 intervention",
            applied=[done("regrowth", FAR[0])])


def test_the_per_cycle_caps_follow_the_caps() -> None:
    caps = Caps(per_cycle=(0, 2, 2, 5))
    refused(regrowth(FAR[0]), "a HEALTHY cycle may have 0 interventions, and this one has had 0",
            caps=caps)
    accepted(regrowth(FAR[1]), level=Level.WATCH, caps=caps,
             applied=[done("regrowth", FAR[0])])
    four = [done("regrowth", FAR[i]) for i in range(4)]
    accepted(regrowth(FAR[4]), level=Level.CRITICAL, caps=caps, applied=four)


def test_the_cycle_cap_comes_first() -> None:
    full = [done("regrowth", FAR[0])]
    refused(regrowth(FAR[2], radius=100), "may have 1 intervention", applied=full)
    refused(reveal(FAR[2], name="Nowhere"), "may have 1 intervention", applied=full)


# ---------------------------------------------------------------- weather


def test_weather_with_nothing_before_is_accepted() -> None:
    accepted(WeatherChange(Weather.FOGGY))


@pytest.mark.parametrize(("tick", "ok"), [(1001, False), (1023, False), (1024, True),
                                          (1100, True)])
def test_weather_changes_at_most_once_every_so_many_ticks(tick: int, ok: bool) -> None:
    before = [done("weather", tick=1000, cycle=1)]
    if ok:
        accepted(WeatherChange(Weather.CLEAR), cycle=2, tick=tick, applied=before)
    else:
        refused(WeatherChange(Weather.CLEAR), "the weather was changed at tick 1000; "
                "the next change may come at tick 1024", cycle=2, tick=tick, applied=before)


def test_weather_is_limited_world_wide_across_cycles() -> None:
    before = [done("weather", tick=1000, cycle=1)]
    refused(WeatherChange(Weather.RAINY), "the weather was changed", cycle=99,
            level=Level.CRITICAL, tick=1010, applied=before)


def test_the_latest_weather_change_counts() -> None:
    before = [done("weather", tick=1000, cycle=2), done("weather", tick=900, cycle=1)]
    refused(WeatherChange(Weather.RAINY), "changed at tick 1000; the next change may come "
            "at tick 1024", cycle=3, tick=1020, applied=before)


def test_weather_follows_its_cap() -> None:
    before = [done("weather", tick=1000, cycle=1)]
    accepted(WeatherChange(Weather.RAINY), cycle=2, tick=1000, applied=before,
             caps=Caps(weather_every_ticks=0))
    refused(WeatherChange(Weather.RAINY), "next change may come at tick 1100", cycle=2,
            tick=1099, applied=before, caps=Caps(weather_every_ticks=100))


def test_local_interventions_do_not_limit_the_weather() -> None:
    before = [done("event", Position(5, 5), cycle=1), done("regrowth", Position(5, 5), cycle=2),
              done("reveal_landmark", Position(5, 5), cycle=3)]
    accepted(WeatherChange(Weather.CLOUDY), cycle=4, applied=before)


# ---------------------------------------------------------------- one area at a time


CENTRE = Position(50, 50)


@pytest.mark.parametrize(("spot", "ok"), [
    (Position(50, 50), False),
    (Position(90, 50), False),
    (Position(10, 50), False),
    (Position(50, 90), False),
    (Position(90, 90), False),
    (Position(10, 10), False),
    (Position(91, 50), True),
    (Position(50, 9), True),
    (Position(91, 91), True),
    (Position(9, 90), True),
])
def test_an_area_is_the_cells_within_area_cells(spot: Position, ok: bool) -> None:
    before = [done("event", CENTRE, tick=1000, cycle=1)]
    if ok:
        accepted(regrowth(spot), cycle=2, tick=1010, applied=before)
    else:
        refused(regrowth(spot), "this area had an intervention (event) at tick 1000; "
                "the next may come at tick 1048", cycle=2, tick=1010, applied=before)


@pytest.mark.parametrize(("tick", "ok"), [(1000, False), (1047, False), (1048, True),
                                          (2000, True)])
def test_an_area_gets_one_every_so_many_ticks(tick: int, ok: bool) -> None:
    before = [done("regrowth", CENTRE, tick=1000, cycle=1)]
    if ok:
        accepted(event(CENTRE), cycle=2, tick=tick, applied=before)
    else:
        refused(event(CENTRE), "this area had an intervention (regrowth) at tick 1000",
                cycle=2, tick=tick, applied=before)


@pytest.mark.parametrize("kind", ["event", "regrowth", "reveal_landmark"])
@pytest.mark.parametrize("new", [event(CENTRE), regrowth(CENTRE), reveal(CENTRE)],
                         ids=["event", "regrowth", "reveal"])
def test_every_local_kind_blocks_every_other(kind: str, new: Intervention) -> None:
    before = [done(kind, Position(60, 40), tick=990, cycle=1)]
    refused(new, f"this area had an intervention ({kind}) at tick 990", cycle=2, applied=before)


def test_two_local_interventions_of_one_cycle_share_the_area_rule() -> None:
    first = [done("event", CENTRE, cycle=7)]
    refused(regrowth(Position(60, 60)), "this area had an intervention (event)", cycle=7,
            level=Level.CRITICAL, applied=first)
    accepted(regrowth(Position(100, 100)), cycle=7, level=Level.CRITICAL, applied=first)


@pytest.mark.parametrize("at", [None, CENTRE])
def test_the_weather_never_blocks_an_area(at: Position | None) -> None:
    before = [done("weather", at, tick=TICK, cycle=1)]
    accepted(regrowth(CENTRE), cycle=2, applied=before)
    accepted(event(CENTRE), cycle=2, applied=before)
    accepted(reveal(CENTRE), cycle=2, applied=before)


def test_nothing_without_a_spot_blocks_an_area() -> None:
    before = [done("none", None, cycle=1), done("regrowth", None, cycle=2)]
    accepted(regrowth(CENTRE), cycle=3, applied=before)


def test_the_area_rule_follows_its_caps() -> None:
    before = [done("event", CENTRE, tick=1000, cycle=1)]
    tight = Caps(area_cells=0, area_every_ticks=5)
    refused(regrowth(CENTRE), "the next may come at tick 1005", cycle=2, tick=1004,
            applied=before, caps=tight)
    accepted(regrowth(Position(51, 50)), cycle=2, tick=1004, applied=before, caps=tight)
    accepted(regrowth(CENTRE), cycle=2, tick=1005, applied=before, caps=tight)
    accepted(regrowth(CENTRE), cycle=2, tick=1000, applied=before,
             caps=Caps(area_every_ticks=0))


def test_any_blocking_intervention_is_enough() -> None:
    before = [done("event", Position(400, 400), tick=1000, cycle=1),
              done("regrowth", Position(55, 55), tick=1005, cycle=2),
              done("event", CENTRE, tick=900, cycle=3)]
    refused(regrowth(CENTRE), "this area had an intervention (regrowth) at tick 1005", cycle=4,
            applied=before)


# ---------------------------------------------------------------- radii, text, landmarks


@pytest.mark.parametrize(("radius", "ok"), [(0, True), (12, True), (13, False), (99, False)])
def test_an_events_radius_is_capped(radius: int, ok: bool) -> None:
    if ok:
        accepted(event(CENTRE, radius=radius))
    else:
        refused(event(CENTRE, radius=radius), f"an event reaches at most 12 cells, "
                f"not {radius}")


@pytest.mark.parametrize(("radius", "ok"), [(0, True), (5, True), (6, False), (40, False)])
def test_a_regrowths_radius_is_capped(radius: int, ok: bool) -> None:
    if ok:
        accepted(regrowth(CENTRE, radius=radius))
    else:
        refused(regrowth(CENTRE, radius=radius), f"regrowth covers at most 5 cells around "
                f"a spot, not {radius}")


@pytest.mark.parametrize(("radius", "ok"), [(0, True), (60, True), (61, False),
                                            (500, False)])
def test_a_reveals_radius_is_capped(radius: int, ok: bool) -> None:
    if ok:
        accepted(reveal(CENTRE, radius=radius))
    else:
        refused(reveal(CENTRE, radius=radius), f"a landmark is revealed to at most 60 cells "
                f"around a spot, not {radius}")


def test_the_radii_follow_their_caps() -> None:
    caps = Caps(event_radius=2, regrowth_radius=1, reveal_radius=3)
    refused(event(CENTRE, radius=3), "at most 2 cells, not 3", caps=caps)
    refused(regrowth(CENTRE, radius=2), "at most 1 cells around a spot, not 2", caps=caps)
    refused(reveal(CENTRE, radius=4), "at most 3 cells around a spot, not 4", caps=caps)
    accepted(reveal(CENTRE, radius=3), caps=caps)


@pytest.mark.parametrize(("length", "ok"), [(1, True), (280, True), (281, False),
                                            (1000, False)])
def test_an_events_text_is_capped(length: int, ok: bool) -> None:
    text = "a" * length
    if ok:
        accepted(event(CENTRE, text=text))
    else:
        refused(event(CENTRE, text=text), f"an event is told in at most 280 characters, "
                f"not {length}")


def test_the_text_cap_follows_its_cap() -> None:
    caps = Caps(event_text_chars=5)
    accepted(event(CENTRE, text="hello"), caps=caps)
    refused(event(CENTRE, text="hello!"), "at most 5 characters, not 6", caps=caps)


def test_an_unknown_landmark_is_refused() -> None:
    refused(reveal(CENTRE, name="Nowhere"), "there is no landmark called 'Nowhere'")
    refused(reveal(CENTRE, name="old oak"), "there is no landmark called 'old oak'")
    refused(reveal(CENTRE, name="Old Oak"), "no landmark called", landmarks={})


def test_a_known_landmark_is_accepted_anywhere_in_range() -> None:
    accepted(reveal(Position(200, 5), name="Spire"))
    accepted(reveal(CENTRE, name="Old Oak"))


def test_an_unknown_landmark_is_named_before_its_radius() -> None:
    refused(reveal(CENTRE, radius=500, name="Nowhere"), "no landmark called 'Nowhere'")


def test_the_radius_is_judged_before_the_area() -> None:
    before = [done("event", CENTRE, cycle=1)]
    refused(regrowth(CENTRE, radius=9), "regrowth covers at most", cycle=2, applied=before)


# ---------------------------------------------------------------- purity


def test_judging_is_pure() -> None:
    before = [done("event", CENTRE, tick=990, cycle=1), done("weather", tick=995, cycle=2)]
    snapshot = list(before)
    first = verdict(regrowth(Position(60, 60)), cycle=3, applied=before)
    second = verdict(regrowth(Position(60, 60)), cycle=3, applied=before)
    assert first == second
    assert not first.accepted
    assert before == snapshot
    assert verdict(WeatherChange(Weather.CLEAR), cycle=3, applied=before) == verdict(
        WeatherChange(Weather.CLEAR), cycle=3, applied=tuple(before))
