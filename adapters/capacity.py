"""How many requests one model at one endpoint may have in flight, learned as a run goes.

    capacities = Capacities(start=8, ceiling=512)
    room = capacities.of("https://api.anthropic.com", "claude-sonnet-5-5")
    ticket = await room.admit(output_tokens=16_000, stopping=lambda: False)
    ...  # the request
    room.answered(ticket, response.headers, input_used=..., output_used=...)
    # or room.refused(ticket, 429, headers, retry_after) / room.failed(ticket)

A tick waits on language models, so how close it comes to its slowest agent's own
chain of requests depends on how many requests run at once. Too few and agents queue
for nothing; too many and the API answers 429 and everyone waits. A `Capacity` is
shared by every caller of one model at one endpoint (agents, narrator) and decides
when the next request may go:

- **Where the API says its limits** (the Messages API sends `anthropic-ratelimit-*`
  headers on every answer: https://platform.claude.com/docs/en/api/rate-limits), it
  keeps a copy of each token bucket (requests, input tokens, output tokens), set from
  the headers as answers come and refilled at the advertised rate between them. A
  request goes when each bucket holds its cost: one request; the uncached input
  tokens it is likely to send (the API does not count cache reads, for most models);
  and the output replies have been writing (the API counts output as it is written,
  not by `max_tokens`). Until the first headers, a Claude model is paced to the lowest limits
  published for its class (`assume_lowest`, adapters/request_sizing.py); those
  requests are streamed, since a stream's headers come as it opens (`learning`,
  `opened`). Under a low limit requests are paced to it instead of refused. Headers
  are the truth: they also count other programs on the same key. Which limit held
  requests longest is the run's pace (`pace`).
- **A 429** pauses every request until the `retry-after` the API named (or the
  bucket's reset) and halves the window; the refused request waits its turn again,
  and does not count as a failed attempt: a turn waits for capacity, it is not lost
  to it. **A 529** (overloaded) halves the window too; the caller backs off.
- **Where no limits are said** (vLLM, Ollama, llama.cpp), the window grows while it
  pays: it doubles each time a full window of answers came faster (in answers a
  second) than the window before, and settles on the best size once doubling gains
  less than `GAIN` (a batching server's replies slow as more run at once).

Waiting requests go first in, first out, so turns start in schedule order.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Mapping

from adapters.rate_buckets import HEADER, KINDS, Bucket, Figures, Ticket, instant, number
from adapters.request_sizing import LimitTooLow, over_limit, pace_words

Clock = Callable[[], float]
Stopping = Callable[[], bool]

GAIN = 0.10
"""Throughput a doubled window must add (a tenth) for a window without limits to grow."""
LONGEST_PAUSE = 60.0
"""The longest a 429 pauses every request: limits are per minute and refill within one,
so a longer `retry-after` (or a reset far off, or a header gone wrong) is a limit that
will not lift soon, and the world should not stand still for it (the refused request
itself gives up: adapters/claude_calls.py)."""
FIRST_OUTPUT_GUESS = 1_000.0
"""Output tokens a request is planned at before any reply was seen (a turn's reply,
thinking included, was 300-2,000 tokens in `python -m bench claude`)."""
POLL = 0.25
"""Seconds between looks at `stopping` while a request waits for room."""


class CapacityClosed(Exception):
    """The run is stopping: the request was never sent."""


class Capacity:
    """The shared room of one model at one endpoint (see the module's docstring)."""

    def __init__(self, name: str, *, start: int, ceiling: int, model: str = "",
                 clock: Clock = time.monotonic, wall: Clock = time.time) -> None:
        if not 1 <= start <= ceiling:
            raise ValueError(f"capacity start {start} must be between 1 and ceiling {ceiling}")
        self.name = name
        self.model = model or name
        self.ceiling = ceiling
        self.window = start
        self.in_flight = 0
        self.clock, self.wall = clock, wall
        self.paused_until = 0.0
        self.buckets: dict[str, Bucket] = {}
        self.figures = Figures(windows=[start])
        self._queue: deque[tuple[asyncio.Future[Ticket], float, float]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._seq = 0
        self._totals = [0.0, 0.0, 0.0]
        self._input_guess = 0.0
        self._output_guess = FIRST_OUTPUT_GUESS
        self._output_seen = 0
        self._limited = False
        """Whether a 429 was met: the window then grows one answer at a time."""
        self.assumed = False
        """Whether the buckets are an assumption (the lowest published limits of the
        model's class, `assume_lowest`) rather than what the endpoint said."""
        self._holding = "window"
        """What held the request at the head of the queue last (for `waited_for`)."""
        self._spent: str | None = None
        """The bucket a 429's headers said was spent: the pause that follows is its."""
        # Learning without limits: answers in the current round, and the best round yet.
        self._round: tuple[float, int, bool] | None = None
        self._best: tuple[int, float] | None = None
        self._settled = False

    # ------------------------------------------------------------------ admission

    async def admit(self, *, output_tokens: float = 0.0, input_tokens: float | None = None,
                    stopping: Stopping | None = None) -> Ticket:
        """Wait for room (first in, first out), then count the request in flight.
        Raises CapacityClosed if `stopping()` turns true while it waits."""
        asked = self.clock()
        cost_in = self._input_guess if input_tokens is None else input_tokens
        self._check_fits(cost_in)
        # RATE_LIMITS: output tokens count as the model writes them, not by max_tokens:
        # a request is planned at what replies have been writing.
        output_tokens = min(output_tokens, self._output_guess) if output_tokens else 0.0
        if not self._queue and self._room(cost_in, output_tokens) == 0.0:
            return self._take(cost_in, output_tokens)
        loop = asyncio.get_running_loop()
        mine: asyncio.Future[Ticket] = loop.create_future()
        waiter = (mine, cost_in, output_tokens)
        self._queue.append(waiter)
        self._pump()
        try:
            while not mine.done():
                if stopping is not None and stopping():
                    raise CapacityClosed("the run is stopping")
                await asyncio.wait([mine], timeout=POLL if stopping is not None else None)
        except BaseException:
            if mine.done() and not mine.cancelled():  # admitted as it was given up
                self.failed(mine.result())
            else:
                mine.cancel()
                if waiter in self._queue:
                    self._queue.remove(waiter)
            self._pump()
            raise
        ticket = mine.result()
        ticket.waited = ticket.started - asked
        self.figures.waited += ticket.waited
        held = self.figures.waited_for
        held[self._holding] = held.get(self._holding, 0.0) + ticket.waited
        return ticket

    def _check_fits(self, cost_in: float) -> None:
        """Input above a bucket's whole limit is refused however long it waits (output
        counts as written, so only input can be too big to start). Against a limit the
        endpoint said, that is a setting to change (LimitTooLow); against an assumed one
        the request is sent when the bucket is full, and the answer tells the truth."""
        bucket = self.buckets.get("input-tokens")
        if not self.assumed and bucket is not None and cost_in > bucket.limit:
            raise LimitTooLow(over_limit(self.model, "input-tokens", bucket.limit, cost_in),
                              "input-tokens")

    def limit(self, kind: str) -> float | None:
        """A bucket's limit a minute, said or assumed; None: not known to have one."""
        bucket = self.buckets.get(kind)
        return None if bucket is None else bucket.limit

    def pace(self) -> tuple[str, float, float] | None:
        """(bucket kind, its limit a minute, seconds waited for it) of the limit that
        held requests longest, when one did; None when none held them."""
        waits = [(seconds, kind) for kind, seconds in self.figures.waited_for.items()
                 if kind in self.buckets and seconds > 0]
        return max(((k, self.buckets[k].limit, w) for w, k in waits), key=lambda p: p[2],
                   default=None)

    def _take(self, cost_in: float, cost_out: float) -> Ticket:
        """Count a request in flight and take its cost from the buckets, at once (so the
        next one admitted in the same moment sees what this one took)."""
        now = self.clock()
        self.in_flight += 1
        self._spend(now, cost_in, cost_out)
        self._seq += 1
        ticket = Ticket(self._seq, now, cost_in, cost_out,
                        (self._totals[0], self._totals[1], self._totals[2]))
        self._totals[0] += 1
        self._totals[1] += cost_in
        self._totals[2] += cost_out
        f = self.figures
        f.admitted += 1
        f.peak_in_flight = max(f.peak_in_flight, self.in_flight)
        if self._round is None:
            self._round = (now, 0, False)
        return ticket

    def _spend(self, now: float, cost_in: float, cost_out: float) -> None:
        for kind, cost in zip(KINDS, (1.0, cost_in, cost_out), strict=True):
            bucket = self.buckets.get(kind)
            if bucket is not None:
                bucket.refill(now)
                bucket.level -= min(cost, bucket.limit)

    def _room(self, cost_in: float, cost_out: float) -> float | None:
        """0.0: a request may go now; seconds: when time alone will make room; None:
        not until an answer frees a place in the window."""
        if self.in_flight >= self.window:
            self._holding = self._spent if self._limited and self._spent else "window"
            return None
        now = self.clock()
        wait = max(0.0, self.paused_until - now)
        holding = self._spent or "pause"
        for kind, cost in zip(KINDS, (1.0, cost_in, cost_out), strict=True):
            bucket = self.buckets.get(kind)
            if bucket is not None and (need := bucket.wait_for(cost, now)) > wait:
                wait, holding = need, kind
        if wait > 0:
            self._holding = holding
        return wait

    def _pump(self) -> None:
        """Admit waiting requests from the front while there is room; if only time will
        make room, look again then."""
        while self._queue:
            head, cost_in, cost_out = self._queue[0]
            if head.done():  # given up
                self._queue.popleft()
                continue
            wait = self._room(cost_in, cost_out)
            if wait is None:
                return
            if wait > 0.0:
                self._wake_in(wait)
                return
            self._queue.popleft()
            head.set_result(self._take(cost_in, cost_out))

    def _wake_in(self, seconds: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(seconds + 0.001, self._woken)

    def _woken(self) -> None:
        self._timer = None
        self._pump()

    # ------------------------------------------------------------------ answers

    def answered(self, ticket: Ticket, headers: Mapping[str, str] | None = None, *,
                 input_used: float | None = None, output_used: float | None = None,
                 after_reply: bool = True) -> None:
        """A request came back with an answer: read what the headers say of the limits,
        settle the output it was planned at against what it wrote, and learn.
        `after_reply`: the headers were sent with the whole reply (so they count its
        output); a stream's come as it opens, before any."""
        if not self._release(ticket):
            return
        now = self.clock()
        self.figures.answered += 1
        if input_used is not None:
            self._input_guess = input_used if self.figures.answered == 1 else (
                0.8 * self._input_guess + 0.2 * input_used)
        told = self._read(ticket, headers or {}, now)
        if not told:
            self._drop_assumed()
        if output_used is not None:
            self._output_guess = output_used if self._output_seen == 0 else (
                0.8 * self._output_guess + 0.2 * output_used)
            self._output_seen += 1
            bucket = self.buckets.get("output-tokens")
            counted = f"{HEADER}output-tokens-remaining" in (headers or {})
            if bucket is not None and not (counted and after_reply):
                # Headers that had not seen the reply, or none: what it wrote is
                # taken now (over what it was planned at, when planned here).
                bucket.refill(now)
                bucket.level = min(bucket.limit, bucket.level - output_used + (
                    0.0 if counted else ticket.output_tokens))
        if told:
            self._grow_with_limits()
        else:
            self._grow_without_limits(now)
        self._pump()

    @property
    def learning(self) -> bool:
        """Nothing is known of the limits yet (no answer, nothing remembered): a request
        now is worth streaming, since a stream's headers come as it opens
        (adapters/claude_calls.py)."""
        return (self.assumed or not self.buckets) and self.figures.answered == 0

    def opened(self, ticket: Ticket, headers: Mapping[str, str]) -> None:
        """A streamed request's headers came, before its answer: what they say of the
        limits opens the window now, not one model latency later. The ticket stays in
        flight until `answered`."""
        if ticket.done:
            return
        if self._read(ticket, headers, self.clock()):
            self._grow_with_limits()
        else:
            self._drop_assumed()
        self._pump()

    def refused(self, ticket: Ticket, status: int, headers: Mapping[str, str] | None = None,
                retry_after: float | None = None) -> None:
        """A 429 (rate limited) or 529/503 (overloaded): halve the window; after a 429,
        nobody sends before the API said it would take requests again."""
        if not self._release(ticket):
            return
        now = self.clock()
        headers = headers or {}
        self._read(ticket, headers, now)
        if status == 429:
            self.figures.rate_limited += 1
            self._limited = True
            self._spent = next((kind for kind in KINDS if number(
                headers.get(f"{HEADER}{kind}-remaining")) == 0), self._spent)
            wait = retry_after if retry_after is not None else self._until_reset(headers, now)
            wait = min(LONGEST_PAUSE, wait if wait is not None else 1.0)
            self.paused_until = max(self.paused_until, now + wait)
        else:
            self.figures.overloaded += 1
        self._set_window(max(1, min(self.window, self.in_flight + 1) // 2))
        self._settled = self._best is not None
        self._pump()

    def failed(self, ticket: Ticket) -> None:
        """Any other failure: the place is given back and nothing is learned."""
        if self._release(ticket):
            self._pump()

    def _release(self, ticket: Ticket) -> bool:
        if ticket.done:
            return False
        ticket.done = True
        self.in_flight -= 1
        return True

    # ------------------------------------------------------------------ learning

    def _read(self, ticket: Ticket, headers: Mapping[str, str], now: float) -> bool:
        """Set each bucket from the headers; whether any was told."""
        told = False
        for index, kind in enumerate(KINDS):
            limit = number(headers.get(f"{HEADER}{kind}-limit"))
            left = number(headers.get(f"{HEADER}{kind}-remaining"))
            if limit is None or left is None or limit <= 0:
                continue
            self._drop_assumed()  # the endpoint's word replaces the assumption
            told = True
            # The answer counted what was admitted before it; the copy must also
            # count what was admitted after it, which the API had not yet seen.
            after = self._totals[index] - ticket.marks[index] - (
                (1.0, ticket.input_tokens, ticket.output_tokens)[index])
            level = min(limit, left) - max(0.0, after)
            # The API counted at the request's arrival: refill from then.
            bucket = self.buckets.setdefault(kind, Bucket(limit, level, ticket.started))
            bucket.limit, bucket.level, bucket.at = limit, level, min(ticket.started, now)
            bucket.refill(now)
        return told

    def _drop_assumed(self) -> None:
        """Forget the assumed limits: the endpoint said its own, or said none (a proxy,
        a compatible server), when the assumed ones would only hold it back."""
        if self.assumed:
            self.assumed = False
            self.buckets.clear()

    def assume_lowest(self, limits: Mapping[str, float]) -> None:
        """Until the endpoint says its limits, pace to `limits` (each bucket full): the
        lowest any key of the model's class has (adapters/request_sizing.py), so the
        first requests fit whatever key this is."""
        if self.buckets:
            return
        now = self.clock()
        for kind, limit in limits.items():
            if kind in KINDS and limit > 0:
                self.buckets[kind] = Bucket(float(limit), float(limit), now)
        self.assumed = bool(self.buckets)

    def _grow_with_limits(self) -> None:
        """The buckets pace requests: the window needs only to stay out of their way.
        Before any 429 it opens wide at once; after one, it grows one answer at a time."""
        if self._limited:
            self._set_window(min(self.ceiling, self.window + 1))
        else:
            self._set_window(self.ceiling)

    def _grow_without_limits(self, now: float) -> None:
        """Rounds of a window's worth of answers: double while answers a second grow by
        more than GAIN, then keep the best window (see the module's docstring)."""
        if self._round is None:
            return
        began, count, full = self._round
        full = full or bool(self._queue) or self.in_flight + 1 >= self.window
        count += 1
        if count < self.window:
            self._round = (began, count, full)
            return
        self._round = (now, 0, False)
        if not full or self._settled:  # too few asked to tell; or settled already
            return
        rate = count / max(now - began, 1e-6)
        if self._best is None or rate > self._best[1] * (1.0 + GAIN):
            self._best = (self.window, rate)
            self._set_window(min(self.ceiling, self.window * 2))
        else:
            self._settled = True
            self._set_window(self._best[0] if rate < self._best[1] else self.window)

    # ------------------------------------------------------------------ between runs

    def said(self) -> dict[str, object] | None:
        """What the endpoint said of its limits, to start the next run with (None: it
        said nothing): each bucket's limit and Hearth's copy of its level, at `wall()`."""
        if not self.buckets or self.assumed:
            return None
        now = self.clock()
        for bucket in self.buckets.values():
            bucket.refill(now)
        said: dict[str, object] = {
            "at": self.wall(), "input_guess": self._input_guess,
            "buckets": {kind: [b.limit, b.level] for kind, b in self.buckets.items()}}
        if (pace := self.pace()) is not None:
            said["paced_by"] = {"kind": pace[0], "limit": pace[1], "waited": round(pace[2], 1)}
        return said

    def assume(self, said: Mapping[str, object]) -> None:
        """Start from what the endpoint said in an earlier run (`said`): each bucket at
        its level then, refilled for the time since at its rate, the window open as
        after a first answer. Headers correct the copy from the first answer on, and a
        429 (another program spent the key meanwhile) pauses and halves as ever."""
        buckets, since = said.get("buckets"), said.get("at")
        if not isinstance(buckets, Mapping) or not isinstance(since, int | float):
            return
        now, elapsed = self.clock(), max(0.0, self.wall() - float(since))
        for kind, pair in buckets.items():
            if kind in KINDS and isinstance(pair, list | tuple) and len(pair) == 2 and all(
                    isinstance(x, int | float) and math.isfinite(x) for x in pair):
                limit, level = float(pair[0]), float(pair[1])
                if limit > 0:
                    self.buckets[kind] = Bucket(limit, max(0.0, min(limit, level)), now - elapsed)
                    self.buckets[kind].refill(now)
        guess = said.get("input_guess")
        if isinstance(guess, int | float) and math.isfinite(guess) and guess >= 0:
            self._input_guess = float(guess)
        if self.buckets:
            self._grow_with_limits()

    def _set_window(self, size: int) -> None:
        if size != self.window:
            self.window = size
            self.figures.windows.append(size)

    def _until_reset(self, headers: Mapping[str, str], now: float) -> float | None:
        """Seconds until the soonest `anthropic-ratelimit-*-reset` a spent bucket names."""
        waits = []
        for kind in KINDS:
            if number(headers.get(f"{HEADER}{kind}-remaining")) == 0:
                at = instant(headers.get(f"{HEADER}{kind}-reset"))
                if at is not None:
                    waits.append(max(0.0, at - self.wall()))
        return min(waits) if waits else None


class Capacities:
    """One Capacity per endpoint and model, for everything one process sends."""

    def __init__(self, *, start: int, ceiling: int, clock: Clock = time.monotonic,
                 wall: Clock = time.time,
                 remembered: Mapping[str, Mapping[str, object]] | None = None,
                 lowest: Callable[[str], Mapping[str, float] | None] | None = None) -> None:
        self.start, self.ceiling, self.clock, self.wall = start, ceiling, clock, wall
        self.lowest = lowest
        """The limits to pace a model to until its endpoint says them (None: none)."""
        self.remembered = dict(remembered or {})
        """What endpoints said in an earlier run, by `key` (storage/limits_file.py)."""
        self._rooms: dict[tuple[str, str], Capacity] = {}

    @staticmethod
    def key(endpoint: str, model: str) -> str:
        return f"{model} at {endpoint.rstrip('/')}"

    def of(self, endpoint: str, model: str) -> Capacity:
        key = (endpoint.rstrip("/"), model)
        room = self._rooms.get(key)
        if room is None:
            name = self.key(endpoint, model)
            room = self._rooms[key] = Capacity(name, start=self.start, ceiling=self.ceiling,
                                               model=model, clock=self.clock, wall=self.wall)
            if (said := self.remembered.get(name)) is not None:
                room.assume(said)
            if self.lowest is not None and (lowest := self.lowest(model)) is not None:
                room.assume_lowest(lowest)
        return room

    def all(self) -> dict[tuple[str, str], Capacity]:
        return dict(self._rooms)

    def pace_lines(self) -> list[str]:
        """A line per model whose limits held requests back this run, saying which limit
        ("paced by claude-sonnet-5-5's output tokens: 8,000 a minute")."""
        lines = []
        for room in self._rooms.values():
            if (pace := room.pace()) is not None:
                kind, limit, seconds = pace
                lines.append(pace_words(room.model, kind, limit, seconds))
        return lines

    def said(self) -> dict[str, dict[str, object]]:
        """What each endpoint said this run, with what earlier runs said of the others."""
        told = dict(self.remembered)
        for room in self._rooms.values():
            if (said := room.said()) is not None:
                told[room.name] = said
        return told
