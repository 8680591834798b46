"""Issue 24 as a user meets it: `hearth` on today's models, against the strict stand-in.

Every run here is the real program in a subprocess, its SDK pointed by
ANTHROPIC_BASE_URL at tests/standin served on a socket in this process. The
stand-in refuses what the Messages API refuses (each rule cites its documentation)
and serves the Models API, so these runs show what a user would see on the day:
the shipped defaults live through a day, a wrong key or a retired model stops the
program in one line, a deprecated one is named once, and `--status` prices what the
API reported at the published prices.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.spend import Price, Rates, Usage, cost
from tests.messages_standin import Request, StrictMessagesApi, simple_agent

PROJECT = Path(__file__).resolve().parents[2]

PUBLISHED = {
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.50, 0.10, 4.0),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, 0.20, long_above=100_000,
                              long=Rates(0.50, 2.50, 0.625, 0.05, 1.0)),
    "claude-sonnet-4-5": Price(3.0, 15.0, 3.75, 0.30, 6.0),
}
"""US dollars per million tokens as https://platform.claude.com/docs/en/about-claude/pricing
gives them (November 2026), written out here rather than read from Hearth's table, so a
wrong price in Hearth fails these tests. Haiku 5.5's higher rates apply to a whole
request whose prompt, cache reads and writes included, is above 100,000 tokens."""


def _hearth(where: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), "--config-dir", str(where / "config"), *args],
        capture_output=True, text=True, timeout=300, cwd=PROJECT, env={**base, **env})


def _config(where: Path, replace: dict[str, str] | None = None) -> None:
    """The shipped config files, with {old: new} text replacements."""
    folder = where / "config"
    folder.mkdir(exist_ok=True)
    for source in (PROJECT / "config").glob("*.yaml"):
        text = source.read_text()
        for old, new in (replace or {}).items():
            text = text.replace(old, new)
        (folder / source.name).write_text(text)


def _world(where: Path) -> None:
    made = _hearth(where, "--init", "--seed", "5", "--size", "60x50")
    assert made.returncode == 0, made.stderr


def _tick(where: Path) -> int:
    db = sqlite3.connect(where / "data" / "world.db")
    try:
        return int(db.execute("SELECT tick FROM world_state").fetchone()[0])
    finally:
        db.close()


def _turns(where: Path) -> list[tuple[int, str, str, int]]:
    db = sqlite3.connect(where / "data" / "world.db")
    try:
        return [(int(t), str(a), str(m), int(n)) for t, a, m, n in
                db.execute("SELECT tick, agent, mind, actions FROM turns ORDER BY tick, agent")]
    finally:
        db.close()


def _usd(model: str, usage: dict[str, Any]) -> float:
    written = usage.get("cache_creation_input_tokens") or 0
    hour = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
    return cost(Usage(usage["input_tokens"], usage["output_tokens"], written - hour,
                      usage.get("cache_read_input_tokens") or 0, hour), PUBLISHED[model])


@pytest.fixture
def standin() -> StrictMessagesApi:
    return StrictMessagesApi()


@pytest.fixture
def url(standin: StrictMessagesApi) -> Iterator[str]:
    with standin.serve() as address:
        yield address


def test_the_shipped_defaults_live_a_day_with_nothing_refused(
    tmp_path: Path, standin: StrictMessagesApi, url: str
) -> None:
    _config(tmp_path)
    _world(tmp_path)
    run = _hearth(tmp_path, "--run", "24", "--quiet",
                  ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert standin.refused == []
    assert "warning" not in run.stderr and "Traceback" not in run.stderr
    assert _tick(tmp_path) == 24
    acted = {a for _, a, mind, n in _turns(tmp_path) if mind == "claude" and n > 0}
    assert acted == {"Ember", "Sage", "River"}  # every default agent acts
    models = {s.model for s in standin.served}
    assert models == {"claude-sonnet-5-5", "claude-haiku-5-5"}
    # Thinking never ran out of room, and every agent request asked for the shipped effort.
    assert [s for s in standin.served if s.stop_reason == "max_tokens"] == []
    # A turn's first request (it ends with the perception) thinks at the shipped effort;
    # one answering tool results within the turn at `claude.follow_up_effort`.
    asked = [s.body for s in standin.served if s.body.get("tools")]
    fresh = [b for b in asked if b["messages"][-1]["content"][-1]["type"] == "text"]
    after = [b for b in asked if b["messages"][-1]["content"][-1]["type"] == "tool_result"]
    assert fresh and all(b["output_config"] == {"effort": "medium"} for b in fresh)
    assert after and all(b["output_config"] == {"effort": "low"} for b in after)
    assert len(fresh) + len(after) == len(asked)
    # What --status says was spent is what the API reported, at the published prices.
    spend = json.loads(_hearth(tmp_path, "--status", "--json").stdout)["spend"]
    reported = sum(_usd(s.model, dict(s.usage)) for s in standin.served)
    assert sum(a["requests"] for a in spend) == len(standin.served)
    assert sum(a["usd"] for a in spend) == pytest.approx(reported, rel=0.01)


def test_a_wrong_key_stops_the_run_at_once_in_one_line(
    tmp_path: Path, standin: StrictMessagesApi, url: str
) -> None:
    _config(tmp_path)
    _world(tmp_path)
    started = time.monotonic()
    run = _hearth(tmp_path, "--run", "5", ANTHROPIC_API_KEY="sk-wrong", ANTHROPIC_BASE_URL=url)
    took = time.monotonic() - started
    assert run.returncode == 1, run.stdout + run.stderr
    assert took < 15
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0] and "401" in lines[0]
    assert "Traceback" not in run.stdout + run.stderr
    assert _tick(tmp_path) == 0 and _turns(tmp_path) == []
    assert standin.served == []  # not one message was sent


def test_a_retired_model_is_refused_before_any_tick(tmp_path: Path) -> None:
    standin = StrictMessagesApi(today=dt.date(2026, 12, 1))  # claude-sonnet-4-5 has retired
    _config(tmp_path, {"model_id: claude-sonnet-5-5": "model_id: claude-sonnet-4-5"})
    _world(tmp_path)
    with standin.serve() as address:
        run = _hearth(tmp_path, "--run", "3", ANTHROPIC_API_KEY="test-key",
                      ANTHROPIC_BASE_URL=address)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "claude-sonnet-4-5" in lines[0] and "claude-sonnet-5-5" in lines[0]
    assert "Ember" in lines[0] and "retired" in lines[0]
    assert _tick(tmp_path) == 0 and standin.served == []


def test_a_deprecated_model_is_named_once_with_its_end_of_life(
    tmp_path: Path, standin: StrictMessagesApi, url: str
) -> None:
    _config(tmp_path, {"model_id: claude-sonnet-5-5": "model_id: claude-sonnet-4-5"})
    _world(tmp_path)
    run = _hearth(tmp_path, "--run", "3", "--quiet", ANTHROPIC_API_KEY="test-key",
                  ANTHROPIC_BASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    said = [line for line in (run.stdout + run.stderr).splitlines() if "deprecated" in line]
    assert len(said) == 1, said  # Hearth's own line; the SDK's per-request warning is hushed
    assert "claude-sonnet-4-5" in said[0] and "November 30, 2026" in said[0]
    assert "claude-sonnet-5-5" in said[0]
    assert "Ember" in said[0] and "Sage" in said[0]
    assert standin.refused == [] and _tick(tmp_path) == 3
    # The old model takes no effort: none is sent to it.
    old = [s.body for s in standin.served if s.model == "claude-sonnet-4-5"]
    assert old and all("output_config" not in b for b in old)


def test_status_prices_each_request_in_its_band(tmp_path: Path, url: str,
                                                standin: StrictMessagesApi) -> None:
    """River's long personality makes every one of its prompts pass 100,000 tokens, so
    each of its Haiku 5.5 requests is priced at the higher band; the others stay below."""
    _config(tmp_path, {"narrator_model: claude-haiku-5-5": "narrator_model: null",
                       "compact_above_chars: 48000": "compact_above_chars: 2000000"})
    agents = tmp_path / "config" / "agents.yaml"
    long = " ".join(["You remember every river you ever crossed, each one by name."] * 6_000)
    agents.write_text(agents.read_text().replace(
        "      long makes you go looking for company.\n",
        f"      long makes you go looking for company. {long}\n"))
    _world(tmp_path)
    run = _hearth(tmp_path, "--run", "3", "--quiet", ANTHROPIC_API_KEY="test-key",
                  ANTHROPIC_BASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert standin.refused == []
    by_agent: dict[str, float] = {}
    long_prompts = 0
    for served in standin.served:
        system = served.body["system"][0]["text"]
        name = system.removeprefix("You are ").split(".", 1)[0]
        usage = dict(served.usage)
        prompt = (usage["input_tokens"] + usage["cache_creation_input_tokens"]
                  + usage["cache_read_input_tokens"])
        long_prompts += prompt > 100_000
        assert (prompt > 100_000) == (name == "River")
        by_agent[name] = by_agent.get(name, 0.0) + _usd(served.model, usage)
    assert long_prompts >= 3
    spend = json.loads(_hearth(tmp_path, "--status", "--json").stdout)["spend"]
    shown = {a["name"]: a["usd"] for a in spend}
    assert shown.keys() == by_agent.keys() == {"Ember", "Sage", "River"}
    for name, usd in by_agent.items():
        assert shown[name] == pytest.approx(usd, rel=0.01), name


def test_a_key_refused_mid_run_stops_it_and_the_next_run_gives_the_turn_back(
    tmp_path: Path
) -> None:
    """The key stops working as the second tick's first turn is answered: the run stops
    after the turns in flight, exit 1, one line; with the key back, the tick resumes and
    the agents who had not acted act. (Revoked on a perception of 09:00, tick 1, so the
    stop falls inside a tick however many requests a turn makes.)"""
    standin = StrictMessagesApi()
    revoked: list[bool] = []

    def revoke_later(request: Request):  # noqa: ANN202 (the stand-in's Plan)
        said = str(request.last_blocks[-1].get("text", "")) if request.fresh else ""
        if "day 1, 09:00" in said and not revoked:
            revoked.append(True)
            standin.keys.clear()
        return simple_agent(request)

    standin.behaviour = revoke_later
    _config(tmp_path, {"narrator_model: claude-haiku-5-5": "narrator_model: null"})
    _world(tmp_path)
    with standin.serve() as address:
        run = _hearth(tmp_path, "--run", "5", ANTHROPIC_API_KEY="test-key",
                      ANTHROPIC_BASE_URL=address)
        assert run.returncode == 1, run.stdout + run.stderr
        assert "Traceback" not in run.stdout + run.stderr
        stopped = [line for line in run.stdout.splitlines() if line.startswith("Stopped at")]
        assert len(stopped) == 1 and "ANTHROPIC_API_KEY" in stopped[0]
        tick = _tick(tmp_path)
        assert tick < 5
        done = {(t, a) for t, a, _, _ in _turns(tmp_path)}
        waiting = {a for a in ("Ember", "Sage", "River") if (tick, a) not in done}
        assert waiting  # someone's turn was given back
        standin.keys["test-key"] = "acct-1"
        again = _hearth(tmp_path, "--run", "1", ANTHROPIC_API_KEY="test-key",
                        ANTHROPIC_BASE_URL=address)
    assert again.returncode == 0, again.stdout + again.stderr
    # "Resuming tick N, interrupted after K turn(s)" or, when no turn of it had run,
    # "Going on with tick N, begun when the last run stopped"
    assert (f"Resuming tick {tick}," in again.stdout) == bool({(tick, a) for a in (
        "Ember", "Sage", "River")} & done)
    assert f"Resuming tick {tick}," in again.stdout or f"Going on with tick {tick}," in again.stdout
    after = {(t, a) for t, a, _, _ in _turns(tmp_path)}
    assert {(tick, a) for a in waiting} <= after
    assert _tick(tmp_path) == tick + 1


def test_the_gardener_checks_its_key_and_model_before_its_first_cycle(
    tmp_path: Path, standin: StrictMessagesApi, url: str
) -> None:
    _config(tmp_path)
    _world(tmp_path)
    refused = _hearth(tmp_path, "--gardener", "--once", ANTHROPIC_API_KEY="sk-wrong",
                      ANTHROPIC_BASE_URL=url)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "ANTHROPIC_API_KEY" in refused.stderr
    assert standin.served == []
    once = _hearth(tmp_path, "--gardener", "--once", ANTHROPIC_API_KEY="test-key",
                   ANTHROPIC_BASE_URL=url)
    assert once.returncode == 0, once.stdout + once.stderr
    assert "decided by claude-haiku-5-5" in once.stdout
    assert [r.path for r in standin.refused] == ["/v1/models"]  # the wrong key's, only
    assert "Traceback" not in once.stdout + once.stderr


def test_ctrl_c_twice_stops_a_run_at_once_even_while_the_api_is_slow(tmp_path: Path) -> None:
    """Each reply takes 4 s. The first Ctrl+C asks the run to finish its turns in flight;
    the second stops it at once: exit 130 in well under a request's time, one line on
    what was kept, and the next run takes the dropped turns again."""
    standin = StrictMessagesApi()
    slow = [True]
    asked = threading.Event()

    def sluggish(request: Request):  # noqa: ANN202 (the stand-in's Plan)
        if slow[0]:
            asked.set()
            time.sleep(4)
        return simple_agent(request)

    standin.behaviour = sluggish
    _config(tmp_path, {"narrator_model: claude-haiku-5-5": "narrator_model: null"})
    _world(tmp_path)
    with standin.serve() as address:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        run = subprocess.Popen(
            [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(tmp_path / "data"),
             "--agents-dir", str(tmp_path / "agents"), "--config-dir", str(tmp_path / "config"),
             "--run", "5"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT,
            env={**env, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": address})
        # Once a request is in flight: start-up takes 2-4 s on a busy machine, and a
        # Ctrl+C before the run loop is a plain interrupt (tested on its own).
        assert asked.wait(60), "no request reached the API"
        run.send_signal(signal.SIGINT)
        time.sleep(0.5)
        asked_at = time.monotonic()
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
        took = time.monotonic() - asked_at
        assert run.returncode == 130, out + err
        assert took < 3.5
        assert "Traceback" not in out + err
        assert [line for line in out.splitlines() if line.startswith("Stopped at once")]
        slow[0] = False
        again = _hearth(tmp_path, "--run", "1", "--quiet", ANTHROPIC_API_KEY="test-key",
                        ANTHROPIC_BASE_URL=address)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _tick(tmp_path) == 1
    assert {a for t, a, _, _ in _turns(tmp_path) if t == 0} == {"Ember", "Sage", "River"}


def test_a_wrong_key_or_an_unknown_model_is_refused_before_a_world_is_made(
    tmp_path: Path, standin: StrictMessagesApi, url: str
) -> None:
    _config(tmp_path)
    key = _hearth(tmp_path, "--run", "2", ANTHROPIC_API_KEY="sk-wrong", ANTHROPIC_BASE_URL=url)
    assert key.returncode == 1 and "ANTHROPIC_API_KEY" in key.stderr
    assert not (tmp_path / "data" / "world.db").exists()
    _config(tmp_path, {"model_id: claude-haiku-5-5": "model_id: claude-haiku-9-9"})
    unknown = _hearth(tmp_path, "--run", "2", ANTHROPIC_API_KEY="test-key",
                      ANTHROPIC_BASE_URL=url)
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr
    lines = unknown.stderr.strip().splitlines()
    assert len(lines) == 1 and "claude-haiku-9-9" in lines[0]
    assert "claude-haiku-5-5" in lines[0] and "no price" not in lines[0]
    assert not (tmp_path / "data" / "world.db").exists() and standin.served == []
