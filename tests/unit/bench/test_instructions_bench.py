"""bench instructions: reading callgrind's counts (the counted run itself needs valgrind)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.instructions import _thread_number, callgrind_totals

HEADER = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\nevents: Ir\n"


def test_the_totals_line_is_the_count() -> None:
    text = HEADER + "summary: 0\n\nfn=(1) main\n0 12\n\ntotals: 480933112\n"
    assert callgrind_totals(text) == 480_933_112


def test_a_file_written_at_exit_has_only_its_summary() -> None:
    assert callgrind_totals(HEADER + "summary: 93311 7\n\nfn=(1) f\n0 3\n") == 93_311


def test_a_file_without_counts_is_refused() -> None:
    with pytest.raises(ValueError, match="no totals line"):
        callgrind_totals("hello\nworld\n")


def test_per_thread_files_are_numbered_from_the_main_thread() -> None:
    files = [Path("/t/callgrind.out-10"), Path("/t/callgrind.out-02"), Path("/t/callgrind.out-01")]
    assert [_thread_number(f) for f in sorted(files, key=_thread_number)] == [1, 2, 10]
