"""Issue 42: what the cost levers decide, and that the agent is told the truth of them."""

from __future__ import annotations

from adapters.claude_mind.levers import Levers, levers_of
from adapters.claude_mind.prompt import TURN_ENDS, system_prompt, turn_ends_later
from adapters.tools import TOOLS
from config.claude import ClaudeSettings
from services.mind import ToolOutcome

SPECS = TOOLS.specs(3)
LATER = Levers(results_next_turn=True, keep_thinking=True)


def _done(name: str, ok: bool = True) -> ToolOutcome:
    return ToolOutcome("toolu_1", name, ok, "done")


def test_only_deeds_that_worked_and_asked_nothing_wait_for_the_next_turn() -> None:
    assert LATER.later([_done("walk"), _done("write_sign")], SPECS)
    assert not LATER.later([_done("walk"), _done("examine")], SPECS)  # asked to learn
    assert not LATER.later([_done("walk", ok=False)], SPECS)  # could not be done
    assert not LATER.later([_done("read_file")], SPECS)
    assert not LATER.later([], SPECS)
    assert not Levers().later([_done("walk")], SPECS)  # the lever off


def test_the_tools_that_inform_are_the_ones_that_only_look() -> None:
    assert {s.name for s in SPECS if s.informs} == {
        "examine", "sense_others", "read_sign", "read_file", "list_files", "recall"}


def test_the_system_prompt_says_how_a_turn_ends_under_the_levers() -> None:
    told = turn_ends_later([s.name for s in SPECS if s.informs])
    later = system_prompt("Ember", "Kind.", told)
    assert told in later and TURN_ENDS not in later
    assert "examine, sense_others, read_sign, read_file, list_files, recall" in later
    assert TURN_ENDS in system_prompt("Ember", "Kind.")


def test_light_thinking_is_each_models_own_and_stops_above_effort_high() -> None:
    levers = levers_of(ClaudeSettings(), ["claude-sonnet-5-5", "claude-haiku-5-5",
                                          "claude-opus-5-5"])
    assert levers.thinking_for("claude-sonnet-5-5", "medium") == {"type": "between_tools"}
    assert levers.thinking_for("claude-haiku-5-5", "high") == {"type": "disabled"}
    assert levers.thinking_for("claude-haiku-5-5", "xhigh") is None  # refused above high
    assert levers.thinking_for("claude-opus-5-5", "medium") is None  # adaptive only
    adaptive = levers_of(ClaudeSettings(thinking="adaptive"), ["claude-sonnet-5-5"])
    assert adaptive.thinking_for("claude-sonnet-5-5", "medium") is None
    assert levers.effort("medium", follow_up=False) == "medium"
    assert levers.effort("medium", follow_up=True) == "low"


def test_the_hour_long_cache_follows_the_worlds_pace_and_the_night() -> None:
    """A 5-minute entry is gone before a turn more than 5 minutes off: the requests of a
    turn whose next one the world's pace puts beyond `hour_cache_after` (seconds a tick,
    times the night's ticks if it falls at night) write for an hour; others for 5
    minutes (https://platform.claude.com/docs/en/build-with-claude/prompt-caching)."""
    from adapters.claude_mind import ClaudeMind, ClaudeProfile
    from core.types import AgentName
    from services.mind import TurnStart

    now = [0.0]
    mind = ClaudeMind(None, {"Ember": ClaudeProfile("claude-sonnet-5-5", "Kind.")},  # type: ignore[arg-type]
                      clock=lambda: now[0], levers=Levers(hour_cache_after=240.0))

    def ttl_at(seconds: float, tick: int, night: int = 0) -> str | None:
        now[0] = seconds
        turn = mind.begin(TurnStart(AgentName("Ember"), tick, None, SPECS, 3, night))  # type: ignore[arg-type]
        return turn.ttl

    assert ttl_at(0, 0) is None  # no pace yet
    assert ttl_at(30, 1) is None  # 30 s a tick
    assert ttl_at(60, 2, night=7) is None  # a night of 7 ticks: 210 s, within 5 minutes
    assert ttl_at(90, 3, night=9) == "1h"  # 270 s of night ahead
    assert ttl_at(690, 4) == "1h"  # a slow world: 600 s a tick
    assert ttl_at(720, 5) is None  # quick again
    assert Levers().ttl(10_000.0) is None  # the lever off
    cached = [b for b in mind._systems.values()]
    marks = {b.value[0]["cache_control"].get("ttl") for b in cached}
    assert marks == {None, "1h"}  # the system block's breakpoint follows the turn's


def test_the_night_left_counts_the_ticks_to_the_morning() -> None:
    from core.clock import night_left

    # 24 ticks a day from 08:00: tick 14 is 22:00, the morning begins at 05:00 (tick 21).
    assert night_left(14, 24, 8) == 7 and night_left(20, 24, 8) == 1
    assert night_left(21, 24, 8) == 0 and night_left(3, 24, 8) == 0
