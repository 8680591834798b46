"""`hearth --run N --mind claude` against the strict stand-in for the Messages API.

The CLI runs in a subprocess exactly as a user starts it; ANTHROPIC_BASE_URL points
the real SDK at tests/standin served on a socket in this process (the SDK honours
the variable). The stand-in refuses what the real API refuses (tests/standin cites
the documentation for each rule), so these runs fail if Hearth sends anything the
API would not take. Its model walks or gathers on seeing the world and ends the turn
after hearing how that went.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.model_catalog import default_prices, price_in
from core.spend import Usage, cost
from tests.messages_standin import StrictMessagesApi

PROJECT = Path(__file__).resolve().parents[2]


class _Served:
    """The stand-in and its address, as the tests use them."""

    def __init__(self, standin: StrictMessagesApi, url: str) -> None:
        self.standin = standin
        self.url = url

    @property
    def bodies(self) -> list[Any]:
        return [s.body for s in self.standin.served]


def _usage(values: dict[str, Any]) -> Usage:
    """The API's usage object as Hearth's Usage (5-minute and 1-hour writes apart)."""
    written = int(values.get("cache_creation_input_tokens") or 0)
    hour = int((values.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0)
    return Usage(int(values.get("input_tokens") or 0), int(values.get("output_tokens") or 0),
                 written - hour, int(values.get("cache_read_input_tokens") or 0), hour)


@pytest.fixture
def served() -> Iterator[_Served]:
    standin = StrictMessagesApi()
    with standin.serve() as url:
        yield _Served(standin, url)
    assert standin.refused == []  # nothing Hearth sent was refused


@pytest.fixture
def api(served: _Served) -> str:
    return served.url


def _hearth(where: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    return subprocess.run(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), *args],
        capture_output=True, text=True, timeout=120, cwd=PROJECT, env={**base, **env},
    )


def test_a_run_with_claude_minds_goes_through_the_api_at_the_base_url(
    tmp_path: Path, api: str, served: _Served
) -> None:
    made = _hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    run = _hearth(tmp_path, "--run", "2", "--mind", "claude",
                  ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api)
    assert run.returncode == 0, run.stderr
    assert " walk: " in run.stdout

    assert {b["model"] for b in served.bodies} == {"claude-sonnet-5-5", "claude-haiku-5-5"}
    db = sqlite3.connect(tmp_path / "data" / "world.db")
    try:
        minds = {m for (m,) in db.execute("SELECT DISTINCT mind FROM turns")}
        moved = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'agent_moved'").fetchone()
    finally:
        db.close()
    assert minds == {"claude"} and moved[0] >= 1
    traces = sorted((tmp_path / "data" / "traces").glob("*.jsonl"))
    assert [p.stem for p in traces] == ["Ember", "River", "Sage"]
    kinds = [json.loads(line)["type"] for line in traces[0].read_text().splitlines()]
    assert kinds[:2] == ["turn_start", "request"] and "tool_result" in kinds
    assert kinds[-1] == "turn_end"


def test_claude_without_a_key_is_refused_before_anything_runs(tmp_path: Path) -> None:
    run = _hearth(tmp_path, "--run", "1", "--mind", "claude")
    assert run.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "data").exists()  # not even a world was made


def test_auto_without_a_key_lives_offline(tmp_path: Path) -> None:
    run = _hearth(tmp_path, "--run", "1", "--mind", "auto", "--quiet")
    assert run.returncode == 0, run.stderr
    db = sqlite3.connect(tmp_path / "data" / "world.db")
    try:
        assert {m for (m,) in db.execute("SELECT DISTINCT mind FROM turns")} == {"offline"}
    finally:
        db.close()


def test_mind_goes_with_run(tmp_path: Path) -> None:
    run = _hearth(tmp_path, "--status", "--mind", "offline")
    assert run.returncode == 2 and "--mind goes with --run" in run.stderr


def test_a_budget_stops_the_run_cleanly_and_status_shows_the_spend(
    tmp_path: Path, api: str, served: _Served
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        (config / source.name).write_text(source.read_text())
    settings = config / "settings.yaml"
    settings.write_text(re.sub(r"(?m)^    per_run: .*$", "    per_run: 0.02",
                               settings.read_text()))
    made = _hearth(tmp_path, "--config-dir", str(config), "--init", "--seed", "5",
                   "--size", "48x40")
    assert made.returncode == 0, made.stderr

    run = _hearth(tmp_path, "--config-dir", str(config), "--run", "50", "--mind", "claude",
                  ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "the per-run budget of $0.02 is reached" in run.stdout
    assert "Everything done so far is saved" in run.stdout
    asked = len(served.bodies)
    # Each request here costs about half a cent: the run stops within a few of the limit.
    assert 3 <= asked <= 12

    status = _hearth(tmp_path, "--config-dir", str(config), "--status", "--json")
    spend = json.loads(status.stdout)["spend"]
    assert sum(a["requests"] for a in spend) == asked
    total = sum(a["usd"] for a in spend)
    # The budget is read between requests, so the requests already in flight when it is
    # reached (at most one per mind at once, here 3, and the narrator's) still land: the
    # overshoot is bounded by what the dearest of them cost, never by a fixed sum (the
    # stand-in's thinking lengths vary with what it is asked).
    costs = sorted((cost(_usage(s.usage), price_in(default_prices(), s.body["model"]))
                    for s in served.standin.served), reverse=True)
    assert 0.02 <= total <= 0.02 + sum(costs[:4]) + 1e-9, (total, costs)
    text = _hearth(tmp_path, "--config-dir", str(config), "--status").stdout
    assert "language-model spend so far: $" in text

    again = _hearth(tmp_path, "--config-dir", str(config), "--run", "5", "--mind", "claude",
                    ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api)
    assert again.returncode == 3  # a new run has its own budget: it runs until it is reached
    assert len(served.bodies) > asked


def test_a_model_without_a_price_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        (config / source.name).write_text(source.read_text())
    agents = config / "agents.yaml"
    agents.write_text(agents.read_text().replace("claude-haiku-5-5", "claude-mystery-9"))
    run = _hearth(tmp_path, "--config-dir", str(config), "--run", "1", "--mind", "claude",
                  ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    assert run.returncode == 2
    # An id neither Hearth's table nor settings.yaml prices is refused as the config is
    # read (config/model_ids.py), saying how to give an endpoint's own model its price.
    assert "claude-mystery-9 is not a Claude model Hearth knows" in run.stderr
    assert "price it under claude.prices in settings.yaml" in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


@pytest.mark.parametrize(("line", "said"), [
    ("    per_tick: 0.012", "the per-tick budget of $0.01 is reached at tick"),
    ("    per_agent_per_day: 0.012", "budget of $0.01 for day 1 is reached"),
])
def test_each_budget_stops_a_run(tmp_path: Path, api: str, served: _Served, line: str,
                                 said: str) -> None:
    config = tmp_path / "config"
    config.mkdir()
    for source in (PROJECT / "config").glob("*.yaml"):
        (config / source.name).write_text(source.read_text())
    settings = config / "settings.yaml"
    key = line.split(":")[0]
    settings.write_text(re.sub(rf"(?m)^{key}: .*$", line, settings.read_text()))
    args = ("--config-dir", str(config))
    made = _hearth(tmp_path, *args, "--init", "--seed", "5", "--size", "48x40")
    assert made.returncode == 0, made.stderr
    run = _hearth(tmp_path, *args, "--run", "20", "--mind", "claude",
                  ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api)
    assert run.returncode == 3 and said in run.stdout, run.stdout + run.stderr
    if "per_agent_per_day" in line:  # the day's limit holds across runs: nothing more is sent
        sent = len(served.bodies)
        again = _hearth(tmp_path, *args, "--run", "5", "--mind", "claude",
                        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api)
        assert again.returncode == 3 and said in again.stdout
        assert len(served.bodies) == sent


def test_a_run_keeps_the_limits_it_was_told_for_the_next_run(tmp_path: Path) -> None:
    """storage/limits_file.py: what the answers' rate-limit headers said is kept in
    data/limits.json as the run closes, for the next run to start from."""
    standin = StrictMessagesApi(rpm=600, otpm=4_000_000)
    with standin.serve() as url:
        made = _hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
        assert made.returncode == 0, made.stderr
        seen = []
        for _ in range(2):
            run = _hearth(tmp_path, "--run", "1", "--mind", "claude",
                          ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
            assert run.returncode == 0, run.stdout + run.stderr
            kept = json.loads((tmp_path / "data" / "limits.json").read_text())
            said = kept["endpoints"][f"claude-sonnet-5-5 at {url.rstrip('/')}"]
            assert said["buckets"]["requests"][0] == 600
            assert said["buckets"]["output-tokens"][0] == 4_000_000
            seen.append(said["at"])
    assert standin.refused == []
    assert seen[1] > seen[0]  # the second run told its own


def test_the_limit_that_paced_a_run_is_named_by_it_and_by_status(tmp_path: Path) -> None:
    """Issue 39: a run paced by a rate limit says which, in its summary and in
    `--status` (from data/limits.json). A key just spent (its buckets empty, 600
    requests a minute) makes every request wait for the requests bucket."""
    standin = StrictMessagesApi(rpm=600, otpm=4_000_000, full=False)
    with standin.serve() as url:
        made = _hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
        assert made.returncode == 0, made.stderr
        run = _hearth(tmp_path, "--run", "2", "--mind", "claude",
                      ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "paced by claude-sonnet-5-5's requests: 600 a minute" in run.stdout
    assert "spend: $" in run.stdout and "an agent-day" in run.stdout
    status = _hearth(tmp_path, "--status").stdout
    assert "rate limits, as the API last said them" in status
    line = next(x for x in status.splitlines() if x.strip().startswith("claude-sonnet-5-5 at"))
    assert "600 requests" in line and "4,000,000 output tokens a minute" in line
    assert "paced by its requests (600 a minute)" in line


@pytest.mark.parametrize(("proxy", "socks_module"), [
    ("socks5://127.0.0.1:1", False),  # a SOCKS proxy, and httpx without its socksio
    ("foo://127.0.0.1:1", True),  # a scheme no client knows
    ("http://[::1", True),  # a malformed URL
])
def test_a_proxy_the_client_cannot_use_is_one_line(tmp_path: Path, proxy: str,
                                                   socks_module: bool) -> None:
    """ALL_PROXY as a user may have set it for other programs: the SDKs' HTTP client
    refuses it as it is built (httpx raises from deep inside); Hearth says so in one
    line, exit 2, before anything is made or sent."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    if not socks_module:  # as in an install without httpx's socks extra
        (shadow / "socksio.py").write_text("raise ImportError('No module named socksio')\n")
    run = _hearth(tmp_path, "--run", "1", "--mind", "claude", ANTHROPIC_API_KEY="test-key",
                  ANTHROPIC_BASE_URL="http://127.0.0.1:9", ALL_PROXY=proxy,
                  PYTHONPATH=str(shadow))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "hearth: the proxy the environment names cannot be used ("), lines
    assert not (tmp_path / "data" / "world.db").exists()


@pytest.mark.parametrize(("limits", "said"), [
    # Input: an agent's first request writes its tools, system prompt and perception to
    # the cache, some 8,000 tokens; a 3,000 ITPM bucket never holds it.
    ({"sonnet": (50, 3_000, 8_000), "haiku": (50, 50_000, 10_000)},
     "claude-sonnet-5-5's input-token limit is 3,000 a minute, below the"),
    # Output: a reply at effort medium needs room for 4,000 tokens of thinking and words,
    # a follow-up at effort low (`claude.follow_up_effort`) 2,000; whichever comes first
    # once the answers told the limit.
    ({"sonnet": (50, 30_000, 1_000), "haiku": (50, 50_000, 10_000)},
     "claude-sonnet-5-5's output-token limit is 1,000 a minute, below the "),
])
def test_a_limit_below_one_request_stops_the_run_in_one_line(
        tmp_path: Path, limits: dict, said: str) -> None:
    """Issue 39: a key whose limit no wait can meet is named in one line, exit 1, within
    10 s, instead of a run that retries for ever (the stand-in refuses input above the
    whole ITPM limit however long one waits, as users report the API does)."""
    standin = StrictMessagesApi(limits=limits)
    with standin.serve() as url:
        made = _hearth(tmp_path, "--init", "--seed", "5", "--size", "48x40")
        assert made.returncode == 0, made.stderr
        started = time.monotonic()
        run = _hearth(tmp_path, "--run", "5", "--mind", "claude",
                      ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
        took = time.monotonic() - started
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert took < 10.0, took
    assert "Traceback" not in out
    stopped = [line for line in out.splitlines() if line.startswith("Stopped at tick")]
    assert len(stopped) == 1 and said in stopped[0], out  # after the turns in flight
    assert "Claude Console, Limits" in stopped[0]
    asked = [r for r in [*standin.served, *standin.limited] if r.model == "claude-sonnet-5-5"]
    assert len(asked) <= 4  # each Sonnet agent asked once or twice, then nobody did


def test_a_first_run_on_the_shipped_settings_stops_at_its_budget(tmp_path: Path) -> None:
    """Issue 39: budgets ship on (settings.yaml: $2.00 a run), so a first run with a key
    and no settings of its own ends, however many ticks it asked for, in one line."""
    standin = StrictMessagesApi()
    with standin.serve() as url:
        run = _hearth(tmp_path, "--run", "1000", "--quiet", "--mind", "claude",
                      ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=url)
    out = run.stdout + run.stderr
    assert run.returncode == 3, out
    stopped = [line for line in out.splitlines() if line.startswith("Stopped at tick")]
    assert len(stopped) == 1 and "the per-run budget of $2.00 is reached" in stopped[0], out
    assert "Traceback" not in out
