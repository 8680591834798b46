"""The provenance account shows a record's words literally: markup and escapes in a
perception, a reply or a narration are text, never styling or terminal commands."""

from __future__ import annotations

import json

from observe.provenance import Provenance
from observe.tui.provenance_screen import provenance_text
from storage.history import StoredTurn

NASTY = "[bold]x[/] \x1b[2J\x1b]0;owned\x07 [@click=app.quit]q[/]"


def _turn(mind: dict, actions: list | None = None) -> StoredTurn:
    record = {"actions": actions if actions is not None else [
        {"args": {"message": NASTY}, "ok": True, "text": f"You say {NASTY}", "tool": "speak"}],
        "mind": mind}
    return StoredTurn(7, "Ember", mind.get("mind", "?"), "ended", json.dumps(record),
                      (("agent_spoke", json.dumps({"agent": "Ember", "message": NASTY})),))


def test_markup_and_escapes_in_a_record_are_shown_as_plain_text() -> None:
    found = Provenance.of(_turn({"mind": "local", "model": "m", "requests": [], "messages": [
        {"role": "user", "content": f"A sign reads {NASTY}"},
        {"role": "assistant", "content": NASTY, "reasoning_content": NASTY}]}))
    text = provenance_text(found)
    assert not text.spans or all("click" not in str(span.style) for span in text.spans)
    plain = text.plain
    assert "[@click=app.quit]q[/]" in plain and "[bold]x[/]" in plain
    assert "\x1b" not in plain and "\x07" not in plain  # (in JSON args: escaped, inert)
    assert found.thinking == (NASTY,) and found.replies == (NASTY,)


def test_a_damaged_or_foreign_record_still_gives_an_account() -> None:
    broken = StoredTurn(3, "Sage", "claude", "error", "not json", ())
    found = Provenance.of(broken)
    assert found.actions == () and found.perception is None
    assert "Sage at tick 3" in provenance_text(found).plain
    other = Provenance.of(_turn({"mind": "scripted"}, actions=[]))
    assert other.notes and "no perception" in other.notes[0]
