"""A world of Claude minds killed at random moments and resumed is the world lived
without a stop (issue 40), its replies coming back in a random order.

`hearth --run` in a process of its own talks to the Messages API stand-in on a socket
(ANTHROPIC_BASE_URL), each reply taking a random time, so the turns of two pairs of
agents far apart interleave differently in every run. The stand-in's agent decides
from who it is and how long its history is (its invitations, speech, steps, gathering
and signs), so a turn taken again after a kill decides as the first attempt did. The
disturbed world is killed with SIGKILL at random moments, resumed to the same total,
and compared with one run undisturbed: every table of the world (positions, things and
their ids, conversations and what was said, cells, events), not the minds' records,
whose reply ids the stand-in numbers by arrival.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.e2e.processes import PROJECT, clean_env
from tests.e2e.worlds import run_args, tick_of, world
from tests.messages_standin import StrictMessagesApi
from tests.standin.pairs import pair_agent, pair_up

TOTAL = 24
KILLS = 2
NOT_WORLD = frozenset({"turns", "minds", "tick_metrics", "tick_progress"})
"""The minds' records hold the stand-in's reply ids (numbered as requests arrive) and
timings; everything else is the world."""


class _Jittery(StrictMessagesApi):
    """Each reply takes a random time (0-40 ms), drawn as the request arrives."""

    def __init__(self, seed: int, **kw) -> None:  # noqa: ANN003
        super().__init__(**kw)
        self._draw = random.Random(seed)
        self._draw_lock = threading.Lock()

    def handler(self, request):  # noqa: ANN001, ANN201
        with self._draw_lock:
            self.latency = self._draw.uniform(0.0, 0.04)
        return super().handler(request)




def _config(where: Path) -> Path:
    """The shipped config, no budgets (the stand-in's tokens are priced as real ones)
    and no narrator (fewer requests; the minds are what is tested)."""
    folder = where / "config"
    shutil.copytree(PROJECT / "config", folder, ignore=shutil.ignore_patterns("*.py"))
    settings = folder / "settings.yaml"
    text = settings.read_text()
    text = re.sub(r"(?m)^(    per_run|    per_agent_per_day): .*$", r"\1: null", text)
    text = re.sub(r"(?m)^(  narrator_model): .*$", r"\1: null", text)
    settings.write_text(text)
    return folder


def _env(url: str) -> dict[str, str]:
    return {**clean_env(), "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}


def _hearth(data: Path, homes: Path, config: Path, url: str, *args: str
            ) -> subprocess.CompletedProcess:
    return subprocess.run(run_args(data, homes, "--config-dir", str(config), *args),
                          capture_output=True, text=True, timeout=300, cwd=PROJECT,
                          env=_env(url))


def _the_world(data: Path, homes: Path) -> dict[str, object]:
    """The world, with the order far clusters' turns were written in left out: rows
    numbered as commits land (a line's id, an event's seq, events.jsonl's order) are
    compared in each conversation's order and each agent's, which the schedule sets."""
    out = {k: v for k, v in world(data, homes).items() if k not in NOT_WORLD}
    db = sqlite3.connect(data / "world.db")
    try:
        out["conversation_turns"] = db.execute(
            "SELECT conversation_id, speaker, message, tick FROM conversation_turns "
            "ORDER BY conversation_id, id").fetchall()
        out["invitations"] = sorted(row[1:] for row in out["invitations"])  # type: ignore[union-attr]
        rows = db.execute("SELECT agent, tick, kind, data, seq FROM events").fetchall()
        # An agent's own events in their order; the rest (a conversation begun, ended)
        # within their tick, by what they say.
        rows.sort(key=lambda r: (r[0] or "", r[1], r[4] if r[0] else 0, r[2], r[3]))
        out["events"] = [r[:4] for r in rows]
    finally:
        db.close()
    out["events.jsonl"] = sorted(  # type: ignore[type-var]
        re.sub(r'"seq": ?\d+,? ?', "", line) for line in out["events.jsonl"])  # type: ignore[union-attr]
    return out


@pytest.mark.hostile
def test_killed_at_random_and_resumed_it_is_the_world_lived_without_a_stop(
        tmp_path: Path) -> None:
    config = _config(tmp_path)
    made = tmp_path / "made"
    done = subprocess.run(run_args(made / "data", made / "agents", "--config-dir",
                                   str(config), "--init", "--seed", "5", "--size", "64x48",
                                   "--agents", "4"),
                          capture_output=True, text=True, timeout=120, cwd=PROJECT,
                          env=clean_env())
    assert done.returncode == 0, done.stderr
    pair_up(made / "data" / "world.db")
    draw = random.Random(int(os.environ.get("HEARTH_TEST_SEED", "40")))

    with _Jittery(1, behaviour=pair_agent).serve() as url:
        calm = tmp_path / "calm"
        shutil.copytree(made, calm)
        lived = _hearth(calm / "data", calm / "agents", config, url, "--run", str(TOTAL),
                        "--quiet", "--mind", "claude")
        assert lived.returncode == 0, lived.stdout + lived.stderr
        undisturbed = _the_world(calm / "data", calm / "agents")

    with _Jittery(2, behaviour=pair_agent).serve() as url:
        hit = tmp_path / "hit"
        shutil.copytree(made, hit)
        data, homes = hit / "data", hit / "agents"
        kills = 0
        for _ in range(KILLS):
            left = TOTAL - tick_of(data)
            proc = subprocess.Popen(run_args(data, homes, "--config-dir", str(config),
                                             "--run", str(left), "--quiet", "--mind",
                                             "claude"),
                                    cwd=PROJECT, env=_env(url), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            time.sleep(draw.uniform(1.0, 3.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(timeout=60)
        for _ in range(3):
            left = TOTAL - tick_of(data)
            if left <= 0:
                break
            resumed = _hearth(data, homes, config, url, "--run", str(left), "--quiet",
                              "--mind", "claude")
            assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert tick_of(data) == TOTAL
        assert kills >= 1  # at least one stop came mid-run
        disturbed = _the_world(data, homes)

    talk = [row for row in undisturbed["conversation_turns"]]  # type: ignore[union-attr]
    assert talk, "the pairs talked"
    assert sorted(undisturbed) == sorted(disturbed)
    for table in sorted(undisturbed):
        assert disturbed[table] == undisturbed[table], table
