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
