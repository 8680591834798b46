"""The legend explains every symbol the grid can draw, in both glyph sets; the
header wraps between its parts instead of cutting the run state off; the palette's
descriptions are cut between words; screenshots are written without following links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from observe.api import RunState
from observe.tui.glyphs import ASCII, EMOJI, GlyphSet
from observe.tui.legend import legend_rows, legend_text
from observe.tui.safe_text import short_words
from observe.tui.screenshots import save_svg
from observe.tui.widgets.header import header_parts, wrap_parts
from tests.unit.observe.tui_kit import snapshot


@pytest.mark.parametrize("glyphs", [EMOJI, ASCII], ids=lambda g: g.name)
def test_every_glyph_the_grid_draws_is_in_the_legend(glyphs: GlyphSet) -> None:
    drawn = {text for parts, _ in (row for _, rows in legend_rows(glyphs) for row in rows)
             for text, _ in parts}
    shown = " ".join(drawn)
    for glyph in (*glyphs.every_cell_glyph(), *glyphs.every_narrow_glyph()):
        if glyph.strip():
            assert glyph.strip() in shown, glyph
    words = legend_text(glyphs).plain
    assert "a door: a gap in a wall" in words and "one-column mark" in words


def test_the_legend_says_what_the_shelter_marks_mean() -> None:
    words = legend_text(EMOJI).plain
    assert "@     an agent" in words and "?     a sign" in words
    assert "in and around shelters" in words


RUNNING = RunState(True, False, None, 12.3)


@pytest.mark.parametrize("width", [30, 40, 60, 110])
def test_the_header_wraps_between_parts_and_keeps_the_run_state(width: int) -> None:
    parts = header_parts(snapshot(tick=4651, spend=0.0123), RUNNING)
    lines = [t.plain for t in wrap_parts(parts, width)]
    assert len(lines) <= 3 and all(len(line) <= width for line in lines)
    joined = " ".join(lines)
    if width >= 40:
        for part in ("t4651", "running without end", "12.3 ticks/s", "$0.0123"):
            assert part in joined, (part, lines)
        assert "…" not in joined


def test_a_paused_or_idle_world_has_no_speed() -> None:
    for state in (RunState(True, True, 0, 310.5), RunState(True, False, 0, 310.5),
                  RunState(False, False, 0, 310.5)):
        words = " ".join(t.plain for t in header_parts(snapshot(), state))
        assert "ticks/s" not in words, state


def test_short_words_cuts_between_words_with_an_ellipsis() -> None:
    text = "An old spring bubbles up between mossy stones, cold even at the height of summer"
    cut = short_words(text, 40)
    assert cut.endswith("…") and len(cut) <= 40
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] in " ,"
    assert short_words("short", 40) == "short"


def test_screenshots_make_their_folder_and_never_follow_a_link(tmp_path: Path) -> None:
    folder = tmp_path / "screenshots"
    first = save_svg("<svg/>", folder, "shot.svg")
    second = save_svg("<svg/>", folder, "shot.svg")
    assert first == folder / "shot.svg" and second == folder / "shot-2.svg"
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(target, folder / "shot-3.svg")
    third = save_svg("<svg/>", folder, "shot.svg")
    assert third.name == "shot-4.svg" and target.read_text() == "keep"
    linked = tmp_path / "linked"
    os.symlink(tmp_path / "elsewhere", linked)
    with pytest.raises(OSError, match="not a folder"):
        save_svg("<svg/>", linked, "shot.svg")


def test_a_screenshot_is_named_by_the_title_and_the_time_without_a_reserved_character() -> None:
    from observe.tui.screenshots import screenshot_name

    name = screenshot_name('Hearth: a <world> "here"', "%Y-%m-%d %H:%M:%S")
    assert name.startswith("Hearth__a__world___here__") and name.endswith(".svg")
    assert not any(c in name.removesuffix(".svg") for c in ' <>:"/\\|?*.')
