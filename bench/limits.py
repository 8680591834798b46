"""A default world under the API's rate limits: how near Hearth comes to the least time
the limits allow, and what it loses on the way.

    python -m bench limits                     (minutes: the limits take their time)
    python -m bench.limits [--scale 10] [--no-limits] [--ticks N] [--seed N]
                           [--legacy-otpm] [--timeout SECONDS]
    python -m bench limits --scale 10          (or BENCH_LIMITS="--scale 10")

A fresh default world (`hearth --init`: the shipped config/agents.yaml and settings,
`--seed` for a world that is the same from run to run) lives `hearth --run N` (24
ticks, one in-world day) in a process of its own, its Claude minds and narrator
talking to tests/messages_standin.py (StrictMessagesApi) through ANTHROPIC_BASE_URL,
as a user's run talks to the API. The stand-in runs in this process (`serve()`,
HTTP/1.1 keep-alive), checks every request against the API's documented rules and
keeps the rate limits as https://platform.claude.com/docs/en/api/rate-limits describes
them (tests/standin/limits.py quotes each rule): token buckets per model class;
Sonnet classes 50 requests / 30,000 input tokens / 8,000 output tokens a minute and
Haiku classes 50 / 50,000 / 10,000 (the old Tier 1 figures, the lowest ever published;
`--scale 10`: ten times those; `--no-limits`: limits so high they never bind, the
headers still sent); each reply takes LATENCY (1 s). ITPM counts uncached input and
cache writes; OTPM counts output as it is written (`--legacy-otpm`: the page's older
rule, max_tokens held from the start of a reply to its end).

Printed: ticks lived; wall time (the `hearth --run` process, start to exit, and the
span from the first request to the last answer); turns ended early (the world's
`turns` table: `ended` is "ended" for a turn the mind ended, "action_limit" for one
that used every call it may make, "error" for one cut short: a request failed, or
waited past the turn's deadline; "error" is the early one); requests answered 429, by
bucket, and of them those that could never fit; replies cut by max_tokens; agents that
acted at least once; and the least time the limits allow.

*Least time the limits allow*: the requests the stand-in served, in the order it
served them, replayed against the same limits by an ideal client: each request is
admitted at the earliest moment (a) no sooner than the one served before it in its
model class (a class's requests keep their order), (b) no sooner than the previous
request of its agent was answered, LATENCY after that one was admitted (an agent's
requests form a chain: its mind's, named by their system prompt, and the narrator's
for it, the scene before its turn and each action's retelling, named by where the
retelling reappears in its mind's next request; `chains`), (c) when every bucket of
its class holds its cost, buckets full at the start and refilled continuously,
output counted as written (tests/standin/limits.py `TokenBucket`, the stand-in's own
buckets). The least time is the last answer's end, from the first request. It is a
floor for that order of requests: it leaves out that a tick waits for all its turns
before the next begins, that agents who stand near each other take their turns one
after another (one cluster), and Hearth's own time between requests; a retelling
that was not used is in no chain. The ratio is the measured time over it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import Figure

PROJECT = Path(__file__).resolve().parent.parent
LATENCY = 1.0
TODAY = dt.date(2026, 11, 26)
LIMITS: Mapping[str, tuple[int, int, int]] = {
    "sonnet": (50, 30_000, 8_000),
    "haiku": (50, 50_000, 10_000),
}
"""(requests, input tokens, output tokens) a minute for every Sonnet and every Haiku
class (the default world's agents are on claude-sonnet-5-5 and claude-haiku-5-5, its
narrator on claude-haiku-5-5)."""
NO_LIMITS = (1_000_000, 1_000_000_000, 1_000_000_000)
KEY = "test-key"


@dataclass(frozen=True)
class Options:
    ticks: int = 24
    scale: float = 1.0
    limits: bool = True
    legacy_otpm: bool = False
    seed: int = 7
    timeout: float = 3600.0

    def table(self) -> dict[str, tuple[int, int, int]]:
        if not self.limits:
            return {line: NO_LIMITS for line in LIMITS}
        return {line: tuple(int(v * self.scale) for v in values)  # type: ignore[misc]
                for line, values in LIMITS.items()}

    def describe(self) -> str:
        if not self.limits:
            return "no limits"
        made = ", ".join(f"{line} {r:,}/{i:,}/{o:,}" for line, (r, i, o) in self.table().items())
        return f"{made} a minute" + (" (older OTPM rule)" if self.legacy_otpm else "")


@dataclass(frozen=True)
class Asked:
    """One served request, as the least-time replay needs it."""

    rate_class: str
    chain: str | None
    """The agent whose request it was (None: in no chain, as the narrator's)."""
    input_cost: int
    output: int
    max_tokens: int


def _hearth(where: Path, *args: str, env: Mapping[str, str] | None = None,
            timeout: float) -> tuple[int | None, str, str, float]:
    """Run `hearth` (main.py) on the world in `where`; (exit code or None if it was
    stopped at the timeout, stdout, stderr, seconds)."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}
    began = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, str(PROJECT / "main.py"), "--data-dir", str(where / "data"),
         "--agents-dir", str(where / "agents"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT,
        env={**base, **(env or {})})
    try:
        out, err = child.communicate(timeout=timeout)
        code: int | None = child.returncode
    except subprocess.TimeoutExpired:  # ask it to stop as a user would (Ctrl-C), then end it
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
        code = None
    return code, out, err, time.monotonic() - began


def _agent(body: Mapping[str, Any]) -> str | None:
    """A mind's requests carry tools and the agent's own system prompt, the same for its
    whole life (adapters/claude_mind/prompt.py): that names its chain."""
    if not body.get("tools"):
        return None
    return hashlib.sha256(json.dumps(body.get("system"), sort_keys=True).encode()).hexdigest()


def _words(text: str) -> str:
    return " ".join(text.split())


def _heard(body: Mapping[str, Any]) -> list[str]:
    """The texts of a mind request's newest message, block by block (a perception, or
    each tool result as the agent heard it)."""
    content = body["messages"][-1].get("content")
    if isinstance(content, str):
        return [_words(content)]
    out = []
    for block in content or []:
        inner = block.get("content") if block.get("type") == "tool_result" else block.get("text")
        if isinstance(inner, list):
            inner = " ".join(b.get("text", "") for b in inner if isinstance(b, Mapping))
        out.append(_words(str(inner or "")))
    return out


def chains(served: Sequence[Any]) -> list[str | None]:
    """The agent each served request was for, where it can be told: a mind's request by
    its system prompt; a narrator's (a scene before a turn, an action's retelling) by
    where its answer reappears: in the newest message of a later request of one agent's
    mind, each block claimed once (adapters/claude_mind/narrator.py puts the retelling
    there: the perception's narrative, or the tool result the agent hears). A retelling
    that was not used (the template stood) is in no chain."""
    keys = [_agent(s.body) for s in served]
    heard = [_heard(s.body) if key else [] for s, key in zip(served, keys, strict=True)]
    claimed: set[tuple[int, int]] = set()
    for i, one in enumerate(served):
        if keys[i] is not None:
            continue
        told = _words(" ".join(b.get("text", "") for b in one.reply.get("content", [])
                               if b.get("type") == "text"))
        if not told:
            continue
        found = next(((j, k) for j in range(i + 1, len(served)) if keys[j] is not None
                      for k, text in enumerate(heard[j])
                      if (j, k) not in claimed and told in text), None)
        if found is not None:
            claimed.add(found)
            keys[i] = keys[found[0]]
    return keys


def least_time(asked: Sequence[Asked], limits: Mapping[str, Mapping[str, int]],
               latency: float, reserve_max_tokens: bool = False) -> float:
    """Seconds from the first request to the last answer for an ideal client sending
    `asked` in order (see the module's docstring)."""
    from tests.standin.limits import TokenBucket

    buckets = {rate_class: {kind: TokenBucket(limit, limit, 0.0)
                            for kind, limit in limits.get(rate_class, {}).items()}
               for rate_class in {a.rate_class for a in asked}}
    previous: dict[str, float] = {}  # a class's last admission
    answered: dict[str, float] = {}  # a chain's last answer
    last = 0.0
    for one in asked:
        mine = buckets[one.rate_class]
        at = previous.get(one.rate_class, 0.0)
        if one.chain is not None:
            at = max(at, answered.get(one.chain, 0.0))
        out_cost = float(one.max_tokens) if reserve_max_tokens else 1.0
        need = {"requests": 1.0, "input-tokens": float(one.input_cost), "output-tokens": out_cost}
        while True:
            wait = max((b.wait_for(need[k], at) for k, b in mine.items()), default=0.0)
            if math.isinf(wait):
                raise ValueError(f"a served request never fits {one.rate_class}'s limits")
            if wait <= 1e-9:
                break
            at += wait
        for kind, bucket in mine.items():
            bucket.take(0.0 if kind == "output-tokens" and not reserve_max_tokens
                        else need[kind])
        end = at + latency
        if "output-tokens" in mine:
            if reserve_max_tokens:
                mine["output-tokens"].flow(end, end, -float(max(0, one.max_tokens - one.output)))
            else:
                mine["output-tokens"].flow(at, end, float(one.output))
        previous[one.rate_class] = at
        if one.chain is not None:
            answered[one.chain] = end
        last = max(last, end)
    return last


@dataclass
class Measured:
    options: Options
    code: int | None
    error: str
    wall: float
    span: float
    ticks_lived: int
    ended: Counter[str]
    reasons: Counter[str]
    agents: int
    acted: int
    figures: dict[str, Any]
    served: int
    least: float
    unchained: int
    """Served requests the replay put in no agent's chain."""


def measure(options: Options) -> Measured:
    from tests.messages_standin import StrictMessagesApi
    from tests.standin.limits import counted

    table = options.table()
    api = StrictMessagesApi(today=TODAY, limits=table, latency=LATENCY,
                            reserve_max_tokens=options.legacy_otpm)
    with tempfile.TemporaryDirectory(prefix="bench-limits-") as tmp:
        where = Path(tmp)
        made = _hearth(where, "--init", "--seed", str(options.seed), timeout=300)
        if made[0] != 0:
            raise RuntimeError(f"hearth --init failed: {made[2].strip()[-500:]}")
        with api.serve(keep_alive=True) as url:
            code, out, err, wall = _hearth(
                where, "--run", str(options.ticks), "--json", timeout=options.timeout,
                env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url})
        with sqlite3.connect(where / "data" / "world.db") as db:
            lived = db.execute("SELECT COUNT(*) FROM tick_metrics").fetchone()[0]
            ended = Counter(dict(db.execute("SELECT ended, COUNT(*) FROM turns GROUP BY ended")))
            agents = db.execute("SELECT COUNT(*) FROM agents").fetchone()[0]
            acted = db.execute(
                "SELECT COUNT(DISTINCT agent) FROM turns WHERE actions > 0").fetchone()[0]
    reasons: Counter[str] = Counter()
    for line in out.splitlines():
        try:
            tick = json.loads(line)
        except ValueError:
            continue
        for turn in tick.get("turns", []) if isinstance(tick, dict) else []:
            if turn.get("error"):
                reasons[str(turn["error"])[:120]] += 1
    not_limits = [r for r in api.refused if r.status != 429]
    if not_limits:  # Hearth sent what the API refuses: the figures would not be the API's
        raise RuntimeError(f"the stand-in refused {len(not_limits)} request(s) for other "
                           f"reasons than a rate limit; the first: {not_limits[0]}")
    served = list(api.served)
    span = (max(s.at for s in served) + LATENCY - min(s.at for s in served)) if served else 0.0
    keys = chains(served)
    asked = [Asked(s.rate_class, chain, counted(s.usage, api.models.get(s.model)),
                   int(s.usage.get("output_tokens") or 0), int(s.body["max_tokens"]))
             for s, chain in zip(served, keys, strict=True)]
    limits = {s.rate_class: api.limits_of(s.model) for s in served}  # as the stand-in kept
    least = least_time(asked, limits, LATENCY, options.legacy_otpm) if asked else 0.0
    error = "" if code == 0 else (err.strip().splitlines() or ["(no message)"])[-1][:300]
    return Measured(options, code, error, wall, span, lived, ended, reasons, agents, acted,
                    api.figures(), len(served), least, keys.count(None))


def figures(m: Measured) -> list[Figure]:
    o = m.options
    head = f"{o.describe()}, {LATENCY:.0f} s a reply"
    turns = sum(m.ended.values())
    limited = Counter[str]()
    never = Counter[str]()
    for f in m.figures.values():
        limited.update(f.limited)
        never.update(f.never_fits)
    refused = sum(limited.values()) + sum(never.values())
    cut = sum(f.cut for f in m.figures.values())
    stopped = "" if m.code == 0 else (
        f" (stopped at the {o.timeout:.0f} s timeout)" if m.code is None
        else f" (exit {m.code}: {m.error})")
    out = [
        Figure(f"default world, {head}: ticks lived", f"{m.ticks_lived} of {o.ticks}{stopped}",
               f"{o.ticks}", m.ticks_lived == o.ticks),
        Figure("wall time",
               f"{m.wall:.1f} s for `hearth --run {o.ticks}`; {m.span:.1f} s from the first "
               f"request to the last answer ({m.served} requests served)"),
        Figure("turns ended early (turns.ended = 'error')",
               f"{m.ended.get('error', 0)} of {turns} ("
               + ", ".join(f"{k} {v}" for k, v in sorted(m.ended.items())) + ")"
               + ("; " + "; ".join(f"{n}x {why}" for why, n in m.reasons.most_common(3))
                  if m.reasons else ""), "0", m.ended.get("error", 0) == 0),
        Figure("requests answered 429",
               f"{refused} (" + (", ".join(f"{k} {v}" for k, v in sorted(limited.items()))
                                 or "none that fit later")
               + f"); never fits: {sum(never.values())}"
               + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(never.items())) + ")"
                  if never else ""), "never fits: 0", not never),
        Figure("replies cut by max_tokens", f"{cut} of {m.served}", "0", cut == 0),
        Figure("agents that acted at least once", f"{m.acted} of {m.agents}",
               f"{m.agents}", m.acted == m.agents),
    ]
    for rate_class, f in sorted(m.figures.items()):
        out.append(Figure(
            f"  {rate_class}",
            f"{f.served} served, 429s {dict(f.limited) or 0}, never fits "
            f"{dict(f.never_fits) or 0}; {f.input_counted:,} input tokens counted "
            f"(+{f.cache_read:,} read from cache), {f.output:,} output of {f.max_tokens:,} "
            "max_tokens asked"))
    ratio = m.wall / m.least if m.least else math.inf
    out += [
        Figure("least time the limits allow (same requests, same order, ideal client)",
               f"{m.least:.1f} s ({m.unchained} of {m.served} requests in no agent's chain)"),
        Figure("wall / least",
               f"{ratio:.2f}x (the span from first request to last answer: "
               f"{m.span / m.least if m.least else math.inf:.2f}x)"),
    ]
    return out


def parse(argv: Sequence[str]) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench.limits", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ticks", type=int, default=24)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every limit by this (10: ten times the limits)")
    parser.add_argument("--no-limits", action="store_true",
                        help="limits so high they never bind (the headers still come)")
    parser.add_argument("--legacy-otpm", action="store_true",
                        help="the older OTPM rule: max_tokens held while a reply is written")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds before the run is stopped (Ctrl-C, then killed)")
    args = parser.parse_args(list(argv))
    if args.ticks < 1 or args.scale <= 0:
        parser.error("--ticks must be 1 or more, --scale above 0")
    return Options(args.ticks, args.scale, not args.no_limits, args.legacy_otpm, args.seed,
                   args.timeout)


def run(argv: Sequence[str] | None = None) -> list[Figure]:
    """`python -m bench limits` (options from BENCH_LIMITS) or `python -m bench.limits`."""
    if argv is None:
        argv = shlex.split(os.environ.get("BENCH_LIMITS", ""))
    return figures(measure(parse(argv)))


if __name__ == "__main__":
    for f in run(sys.argv[1:]):
        print(f"{f.name}: {f.value}" + (f"   (target {f.target})" if f.target else ""),
              flush=True)
