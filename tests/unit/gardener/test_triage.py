"""Triage: health figures sorted into a level, with its reasons, by fixed thresholds."""

from __future__ import annotations

import pytest

from core.gardener import AgentHealth, HealthFigures, Level, Reason, Thresholds, Triage, triage
from core.types import Position

RULES = Thresholds()
WINDOW = 24


def agent(name: str = "Ada", *, at: tuple[int, int] = (0, 0), alone: int = 0,
          actions: int = 0, failures: int = 0, resources: int = 50,
          asleep: int = 0) -> AgentHealth:
    """An agent that crosses no line unless told to."""
    return AgentHealth(name, Position(*at), alone, actions, failures, resources, asleep)


def world(*agents: AgentHealth, window: int = WINDOW, quiet: int = 0,
          changes: int = WINDOW, tick: int = 1000) -> HealthFigures:
    """A lively world (a change a tick, someone spoke just now) with these agents."""
    return HealthFigures(tick, window, tuple(agents), quiet, changes)


def summary(result: Triage) -> set[tuple[Level, str, str | None]]:
    return {(r.level, r.measure, r.agent) for r in result.reasons}


# ---------------------------------------------------------------- the figures themselves


@pytest.mark.parametrize(("window", "changes", "expected"), [
    (24, 0, 1.0),
    (24, 12, 0.5),
    (24, 6, 0.75),
    (24, 24, 0.0),
    (24, 100, 0.0),
    (10, 1, 0.9),
    (0, 0, 0.0),
    (-5, 0, 0.0),
])
def test_sameness_falls_as_changes_come(window: int, changes: int, expected: float) -> None:
    assert world(window=window, changes=changes).sameness == pytest.approx(expected)


@pytest.mark.parametrize(("actions", "failures", "expected"), [
    (0, 0, 0.0),
    (10, 0, 0.0),
    (10, 4, 0.4),
    (8, 6, 0.75),
    (3, 3, 1.0),
])
def test_failure_share_is_failures_over_actions(actions: int, failures: int,
                                                expected: float) -> None:
    assert agent(actions=actions, failures=failures).failure_share == pytest.approx(expected)


def test_figures_find_an_agent_by_name() -> None:
    ada, bea = agent("Ada"), agent("Bea", alone=3)
    figures = world(ada, bea)
    assert figures.agent("Bea") is bea
    assert figures.agent("Ada") is ada
    assert figures.agent("Cy") is None


def test_levels_are_ordered_and_print_by_name() -> None:
    assert Level.HEALTHY < Level.WATCH < Level.WARNING < Level.CRITICAL
    assert [int(level) for level in Level] == [0, 1, 2, 3]
    assert str(Level.WARNING) == "WARNING"
    assert f"{Level.CRITICAL}" == "CRITICAL"


# ---------------------------------------------------------------- a healthy world


def test_a_healthy_world_has_no_reasons() -> None:
    result = triage(world(agent("Ada"), agent("Bea", alone=47, actions=20, failures=9,
                                              resources=5, asleep=19)), RULES)
    assert result == Triage(Level.HEALTHY, ())
    assert result.worst_agents("alone") == ()


def test_an_empty_world_is_healthy() -> None:
    assert triage(world(quiet=10_000), RULES) == Triage(Level.HEALTHY, ())


def test_a_lone_agent_in_a_quiet_world_is_not_called_quiet() -> None:
    result = triage(world(agent("Ada"), quiet=10_000), RULES)
    assert result.level is Level.HEALTHY
    assert result.reasons == ()


# ---------------------------------------------------------------- alone


@pytest.mark.parametrize(("ticks", "level"), [
    (0, Level.HEALTHY),
    (47, Level.HEALTHY),
    (48, Level.WATCH),
    (119, Level.WATCH),
    (120, Level.WARNING),
    (239, Level.WARNING),
    (240, Level.CRITICAL),
    (5000, Level.CRITICAL),
])
def test_alone_crosses_each_line_at_its_tick(ticks: int, level: Level) -> None:
    result = triage(world(agent("Ada", alone=ticks)), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
    else:
        (reason,) = result.reasons
        assert (reason.level, reason.measure, reason.agent) == (level, "alone", "Ada")
        assert "Ada" in reason.text
        assert f"{ticks} ticks" in reason.text


def test_alone_lines_follow_the_thresholds() -> None:
    rules = Thresholds(alone_ticks=(5, 10, 15))
    assert triage(world(agent(alone=4)), rules).level is Level.HEALTHY
    assert triage(world(agent(alone=5)), rules).level is Level.WATCH
    assert triage(world(agent(alone=10)), rules).level is Level.WARNING
    assert triage(world(agent(alone=15)), rules).level is Level.CRITICAL


# ---------------------------------------------------------------- failing


@pytest.mark.parametrize(("actions", "failures", "level"), [
    (10, 4, Level.HEALTHY),
    (10, 5, Level.WATCH),
    (10, 7, Level.WATCH),
    (10, 8, Level.WARNING),
    (10, 10, Level.WARNING),
    (6, 3, Level.WATCH),
    (6, 5, Level.WARNING),
])
def test_failing_with_enough_actions(actions: int, failures: int, level: Level) -> None:
    result = triage(world(agent("Bea", actions=actions, failures=failures)), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
    else:
        (reason,) = result.reasons
        assert (reason.level, reason.measure, reason.agent) == (level, "failing", "Bea")
        assert f"{failures} of Bea's last {actions} actions failed" in reason.text


@pytest.mark.parametrize(("actions", "failures"), [(5, 5), (5, 4), (1, 1), (0, 0)])
def test_failing_is_not_counted_below_the_least_actions(actions: int, failures: int) -> None:
    result = triage(world(agent("Bea", actions=actions, failures=failures)), RULES)
    assert result == Triage(Level.HEALTHY, ())


def test_failing_least_actions_follows_the_thresholds() -> None:
    rules = Thresholds(failure_min_actions=2)
    assert triage(world(agent(actions=2, failures=2)), rules).level is Level.WARNING
    assert triage(world(agent(actions=1, failures=1)), rules).level is Level.HEALTHY


# ---------------------------------------------------------------- quiet


@pytest.mark.parametrize(("ticks", "level"), [
    (0, Level.HEALTHY),
    (71, Level.HEALTHY),
    (72, Level.WATCH),
    (167, Level.WATCH),
    (168, Level.WARNING),
    (1000, Level.WARNING),
])
def test_quiet_conversations_with_two_agents(ticks: int, level: Level) -> None:
    result = triage(world(agent("Ada"), agent("Bea"), quiet=ticks), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
    else:
        (reason,) = result.reasons
        assert (reason.level, reason.measure, reason.agent) == (level, "quiet", None)
        assert f"{ticks} ticks" in reason.text


@pytest.mark.parametrize("count", [0, 1])
def test_quiet_is_not_counted_with_fewer_than_two_agents(count: int) -> None:
    agents = [agent(f"A{i}") for i in range(count)]
    result = triage(world(*agents, quiet=500), RULES)
    assert result.level is Level.HEALTHY
    assert all(r.measure != "quiet" for r in result.reasons)


def test_quiet_names_no_agent() -> None:
    result = triage(world(agent("Ada"), agent("Bea"), agent("Cy"), quiet=200), RULES)
    assert result.worst_agents("quiet") == ()
    assert summary(result) == {(Level.WARNING, "quiet", None)}


# ---------------------------------------------------------------- sameness


@pytest.mark.parametrize(("window", "changes", "level"), [
    (24, 24, Level.HEALTHY),
    (24, 3, Level.HEALTHY),
    (24, 2, Level.WATCH),
    (24, 1, Level.WATCH),
    (24, 0, Level.WARNING),
    (10, 2, Level.HEALTHY),
    (10, 1, Level.WATCH),
])
def test_sameness_of_an_unchanging_world(window: int, changes: int, level: Level) -> None:
    result = triage(world(agent("Ada"), window=window, changes=changes), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
    else:
        (reason,) = result.reasons
        assert (reason.level, reason.measure, reason.agent) == (level, "sameness", None)
        assert f"{changes} lasting changes" in reason.text
        assert f"last {window} ticks" in reason.text


def test_sameness_counts_even_without_agents() -> None:
    result = triage(world(changes=0), RULES)
    assert summary(result) == {(Level.WARNING, "sameness", None)}


def test_sameness_is_not_counted_without_a_window() -> None:
    rules = Thresholds(sameness=(0.0, 1.0))
    assert world(window=0, changes=0).sameness == 0.0
    assert triage(world(agent(), window=0, changes=0), rules) == Triage(Level.HEALTHY, ())


# ---------------------------------------------------------------- resources near


@pytest.mark.parametrize(("units", "level"), [
    (50, Level.HEALTHY),
    (5, Level.HEALTHY),
    (4, Level.WATCH),
    (1, Level.WATCH),
    (0, Level.WARNING),
])
def test_resources_near_an_agent(units: int, level: Level) -> None:
    result = triage(world(agent("Cy", resources=units)), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
        return
    (reason,) = result.reasons
    assert (reason.level, reason.measure, reason.agent) == (level, "resources", "Cy")
    if level is Level.WARNING:
        assert reason.text == "nothing left to gather near Cy"
    else:
        assert reason.text == f"only {units} units left to gather near Cy"


def test_resources_lines_follow_the_thresholds() -> None:
    rules = Thresholds(resources_near=(10, 3))
    assert triage(world(agent(resources=11)), rules).level is Level.HEALTHY
    assert triage(world(agent(resources=10)), rules).level is Level.WATCH
    assert triage(world(agent(resources=4)), rules).level is Level.WATCH
    assert triage(world(agent(resources=3)), rules).level is Level.WARNING


# ---------------------------------------------------------------- sleep


@pytest.mark.parametrize(("window", "asleep", "level"), [
    (24, 0, Level.HEALTHY),
    (24, 19, Level.HEALTHY),
    (24, 20, Level.WATCH),
    (24, 24, Level.WATCH),
    (10, 8, Level.HEALTHY),
    (10, 9, Level.WATCH),
])
def test_sleeping_most_of_the_window(window: int, asleep: int, level: Level) -> None:
    changes = window
    result = triage(world(agent("Dee", asleep=asleep), window=window, changes=changes), RULES)
    assert result.level is level
    if level is Level.HEALTHY:
        assert result.reasons == ()
    else:
        (reason,) = result.reasons
        assert (reason.level, reason.measure, reason.agent) == (Level.WATCH, "sleep", "Dee")
        assert f"slept {asleep} of the last {window} ticks" in reason.text


def test_sleep_is_never_more_than_watch() -> None:
    result = triage(world(agent("Dee", asleep=WINDOW)), RULES)
    assert result.level is Level.WATCH


def test_sleep_is_not_counted_without_a_window() -> None:
    result = triage(world(agent("Dee", asleep=5), window=0, changes=0), RULES)
    assert result == Triage(Level.HEALTHY, ())


# ---------------------------------------------------------------- several measures at once


def test_the_level_is_the_highest_of_the_reasons() -> None:
    result = triage(world(agent("Ada", asleep=23), agent("Bea", resources=2),
                          quiet=170, changes=2), RULES)
    assert result.level is Level.WARNING
    assert summary(result) == {
        (Level.WATCH, "sleep", "Ada"),
        (Level.WATCH, "resources", "Bea"),
        (Level.WARNING, "quiet", None),
        (Level.WATCH, "sameness", None),
    }


def test_one_agent_can_have_every_measure() -> None:
    ada = agent("Ada", alone=130, actions=10, failures=6, resources=0, asleep=22)
    result = triage(world(ada), RULES)
    assert result.level is Level.WARNING
    assert summary(result) == {
        (Level.WARNING, "alone", "Ada"),
        (Level.WATCH, "failing", "Ada"),
        (Level.WARNING, "resources", "Ada"),
        (Level.WATCH, "sleep", "Ada"),
    }


def test_a_critical_alone_agent_makes_the_world_critical() -> None:
    result = triage(world(agent("Ada", alone=300), agent("Bea")), RULES)
    assert result.level is Level.CRITICAL
    assert summary(result) == {(Level.CRITICAL, "alone", "Ada")}


# ---------------------------------------------------------------- the crowd rule


def test_two_agents_at_warning_make_the_world_critical() -> None:
    result = triage(world(agent("Ada", resources=0), agent("Bea", alone=130)), RULES)
    assert result.level is Level.CRITICAL
    crowd = [r for r in result.reasons if r.measure == "crowd"]
    assert len(crowd) == 1
    assert crowd[0].level is Level.CRITICAL
    assert crowd[0].agent is None
    assert "2 of 2 agents" in crowd[0].text


@pytest.mark.parametrize(("count", "in_trouble", "level"), [
    (2, 1, Level.WARNING),
    (2, 2, Level.CRITICAL),
    (3, 1, Level.WARNING),
    (3, 2, Level.CRITICAL),
    (4, 2, Level.CRITICAL),
    (5, 2, Level.WARNING),
    (5, 3, Level.CRITICAL),
    (10, 4, Level.WARNING),
    (10, 5, Level.CRITICAL),
])
def test_the_crowd_rule_needs_half_the_agents(count: int, in_trouble: int,
                                              level: Level) -> None:
    agents = [agent(f"A{i:02}", resources=0 if i < in_trouble else 50) for i in range(count)]
    result = triage(world(*agents), RULES)
    assert result.level is level
    crowd = [r for r in result.reasons if r.measure == "crowd"]
    if level is Level.CRITICAL:
        assert len(crowd) == 1
        assert f"{in_trouble} of {count} agents" in crowd[0].text
    else:
        assert crowd == []


def test_a_single_agent_at_warning_is_no_crowd() -> None:
    result = triage(world(agent("Ada", resources=0, alone=150)), RULES)
    assert result.level is Level.WARNING
    assert "crowd" not in {r.measure for r in result.reasons}


def test_agents_at_watch_make_no_crowd() -> None:
    agents = [agent(f"A{i}", resources=3, alone=50) for i in range(4)]
    result = triage(world(*agents), RULES)
    assert result.level is Level.WATCH
    assert "crowd" not in {r.measure for r in result.reasons}


def test_an_agent_in_trouble_twice_counts_once_for_the_crowd() -> None:
    result = triage(world(agent("Ada", resources=0, alone=130, actions=10, failures=9),
                          agent("Bea"), agent("Cy")), RULES)
    assert result.level is Level.WARNING
    assert "crowd" not in {r.measure for r in result.reasons}


def test_a_critical_agent_counts_for_the_crowd() -> None:
    result = triage(world(agent("Ada", alone=250), agent("Bea", actions=10, failures=9)),
                    RULES)
    assert (Level.CRITICAL, "crowd", None) in summary(result)


def test_world_measures_do_not_count_for_the_crowd() -> None:
    result = triage(world(agent("Ada"), agent("Bea"), quiet=500, changes=0), RULES)
    assert result.level is Level.WARNING
    assert "crowd" not in {r.measure for r in result.reasons}


def test_the_crowd_share_follows_the_thresholds() -> None:
    agents = [agent("Ada", resources=0), agent("Bea", resources=0), agent("Cy")]
    assert triage(world(*agents), Thresholds(crowd_share=1.0)).level is Level.WARNING
    assert triage(world(*agents), Thresholds(crowd_share=0.6)).level is Level.CRITICAL


def test_the_crowd_always_needs_two_agents_in_trouble() -> None:
    agents = [agent("Ada", resources=0), agent("Bea"), agent("Cy")]
    assert triage(world(*agents), Thresholds(crowd_share=0.01)).level is Level.WARNING


# ---------------------------------------------------------------- determinism


def busy_world() -> HealthFigures:
    return world(
        agent("Ada", alone=60, resources=0),
        agent("Bea", actions=12, failures=11, asleep=21),
        agent("Cy", alone=250),
        agent("Dee", resources=2),
        quiet=90, changes=1)


def test_the_same_figures_give_the_same_triage() -> None:
    first, second = triage(busy_world(), RULES), triage(busy_world(), RULES)
    assert first == second
    assert first.reasons == second.reasons
    assert first.level is Level.CRITICAL


def test_the_order_of_agents_does_not_matter() -> None:
    figures = busy_world()
    backwards = HealthFigures(figures.tick, figures.window, tuple(reversed(figures.agents)),
                              figures.ticks_since_conversation, figures.changes)
    shuffled = HealthFigures(figures.tick, figures.window,
                             (figures.agents[2], figures.agents[0], figures.agents[3],
                              figures.agents[1]),
                             figures.ticks_since_conversation, figures.changes)
    assert triage(backwards, RULES) == triage(figures, RULES)
    assert triage(shuffled, RULES) == triage(figures, RULES)


def test_agent_reasons_come_by_name_then_world_reasons() -> None:
    result = triage(busy_world(), RULES)
    named = [r.agent for r in result.reasons if r.agent is not None]
    assert named == sorted(named)
    measures = [r.measure for r in result.reasons]
    assert measures[-3:] == ["quiet", "sameness", "crowd"]


def test_a_triage_is_frozen() -> None:
    result = triage(busy_world(), RULES)
    with pytest.raises(AttributeError):
        result.level = Level.HEALTHY  # type: ignore[misc]
    assert isinstance(result.reasons, tuple)


# ---------------------------------------------------------------- worst agents


def test_worst_agents_come_worst_first_then_by_name() -> None:
    result = triage(world(agent("Dee", alone=130), agent("Ada", alone=50),
                          agent("Cy", alone=125), agent("Bea", alone=400), agent("Eve")),
                    RULES)
    assert result.worst_agents("alone") == ("Bea", "Cy", "Dee", "Ada")


def test_worst_agents_only_name_the_measure_asked() -> None:
    result = triage(busy_world(), RULES)
    assert result.worst_agents("resources") == ("Ada", "Dee")
    assert result.worst_agents("failing") == ("Bea",)
    assert result.worst_agents("sleep") == ("Bea",)
    assert result.worst_agents("alone") == ("Cy", "Ada")
    assert result.worst_agents("quiet") == ()
    assert result.worst_agents("crowd") == ()
    assert result.worst_agents("no such measure") == ()


def test_worst_agents_of_a_triage_made_by_hand() -> None:
    made = Triage(Level.WARNING, (
        Reason(Level.WATCH, "alone", "z", "Zed"),
        Reason(Level.WARNING, "alone", "y", "Yan"),
        Reason(Level.WATCH, "alone", "a", "Abe"),
        Reason(Level.WARNING, "quiet", "q"),
        Reason(Level.WARNING, "resources", "r", "Abe"),
    ))
    assert made.worst_agents("alone") == ("Yan", "Abe", "Zed")
    assert made.worst_agents("resources") == ("Abe",)
    assert made.worst_agents("quiet") == ()


# ---------------------------------------------------------------- the thresholds


def test_the_default_thresholds() -> None:
    rules = Thresholds()
    assert rules.alone_ticks == (48, 120, 240)
    assert rules.failure_share == (0.5, 0.8)
    assert rules.failure_min_actions == 6
    assert rules.quiet_ticks == (72, 168)
    assert rules.sameness == (0.9, 1.0)
    assert rules.resources_near == (4, 0)
    assert rules.asleep_share == 0.8
    assert rules.crowd_share == 0.5


@pytest.mark.parametrize("rules", [
    dict(alone_ticks=(1, 1, 1)),
    dict(failure_share=(0.0, 0.0)),
    dict(failure_share=(1.0, 1.0)),
    dict(quiet_ticks=(1, 1)),
    dict(sameness=(0.0, 0.0)),
    dict(sameness=(1.0, 1.0)),
    dict(resources_near=(0, 0)),
    dict(resources_near=(3, 3)),
    dict(asleep_share=1.0),
    dict(crowd_share=1.0),
])
def test_thresholds_accept_equal_lines_at_the_edges(rules: dict[str, object]) -> None:
    made = Thresholds(**rules)  # type: ignore[arg-type]
    for name, value in rules.items():
        assert getattr(made, name) == value


@pytest.mark.parametrize(("rules", "message"), [
    (dict(alone_ticks=(0, 120, 240)), "alone_ticks"),
    (dict(alone_ticks=(-1, 120, 240)), "alone_ticks"),
    (dict(alone_ticks=(121, 120, 240)), "alone_ticks"),
    (dict(alone_ticks=(48, 241, 240)), "alone_ticks"),
    (dict(failure_share=(0.8, 0.5)), "failure_share"),
    (dict(failure_share=(-0.1, 0.5)), "failure_share"),
    (dict(failure_share=(0.5, 1.1)), "failure_share"),
    (dict(quiet_ticks=(0, 168)), "quiet_ticks"),
    (dict(quiet_ticks=(169, 168)), "quiet_ticks"),
    (dict(sameness=(1.0, 0.9)), "sameness"),
    (dict(sameness=(-0.1, 0.9)), "sameness"),
    (dict(sameness=(0.9, 1.5)), "sameness"),
    (dict(resources_near=(0, 4)), "resources_near"),
    (dict(resources_near=(4, -1)), "resources_near"),
    (dict(asleep_share=0.0), "asleep_share"),
    (dict(asleep_share=1.2), "asleep_share"),
    (dict(crowd_share=0.0), "crowd_share"),
    (dict(crowd_share=-0.5), "crowd_share"),
    (dict(crowd_share=1.01), "crowd_share"),
])
def test_thresholds_refuse_badly_ordered_values(rules: dict[str, object],
                                                message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Thresholds(**rules)  # type: ignore[arg-type]
