"""A small, cheap model tells what happened, and what is seen, with the templates as a net.

    narrator = ModelNarrator(client, "claude-haiku-4-5", speakers={"Ember"})
    engine = await HearthEngine.open(storage, config, mind=..., narrator=narrator,
                          scene_narrator=narrator)

Only for agents a language model speaks for (`speakers`): the offline mind reads
no prose, so its actions keep the free templates. Following the reference design,
the model tells the actions worth a scene (examining, sensing, journeys, making,
building), every failure, and any result carrying discoveries; simple successes
keep their template. Each perception's narrative is retold too.

The model is handed the template's text, which holds every mechanical fact, and
asked to retell it in two to four sentences. Its answer is used only if it kept
the facts that can be checked (services/narration_check.py: numbers, directions,
distances with their directions, terrain, names, quoted text; nothing added, nothing
moved between sentences); otherwise, and on any API failure, once a budget is
reached, or with an empty reply, the template stands. A narration never fails a
turn. The time and weather are given only with a turn's first result (the template
colours only that one), so the model colours a turn once, not every result.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anthropic

from adapters.capacity import Capacities, CapacityClosed
from adapters.claude_calls import CallPolicy, GaveUp, ask, describe
from adapters.claude_mind.request_plan import RequestPlan
from config import load_config
from core.actions import ActionResult
from core.perception import Perception
from core.spend import Usage
from services.budget import SpendMeter
from services.narration_check import keeps_facts
from services.narrator import COLOUR_OPENINGS, NarrationContext, TemplateNarrator

log = logging.getLogger("hearth.narrator")

TOLD_BY_MODEL = frozenset({
    "examine", "sense_others", "journey", "combine", "work", "apply", "build_shelter",
    "place_wall", "place_door", "remove_wall",
})
"""Successful actions the model tells (others keep their template unless they failed)."""

ACTION_SYSTEM = """\
You narrate a quiet world to the one who lives the moment, in the second person. You \
are given what happened, exactly. Retell it in two to four short sentences; use the \
time and weather as colour only when they are given, and otherwise mention neither. \
Keep every fact: every number, every name, every direction and distance (write them \
as given, e.g. "3 cells to the east"), every kind of ground, every quoted text, what \
worked or why it did not, and any hint of what might be tried. Add no new facts, \
places, directions or ground, no advice and no questions. If discoveries are \
mentioned, weave them in as something you wonder about."""

SCENE_SYSTEM = """\
You describe what someone sees around them in a quiet world, in the second person. \
You are given the facts, exactly. Retell them in two to four short sentences, coloured \
by the time and weather. Keep every fact: every name, every direction and distance \
(write them as given, e.g. "3 cells to the east", keeping each thing in the sentence \
that names it), every kind of ground, every number. Add nothing that is not there."""


class ModelNarrator:
    """Implements services.narrator.Narrator (and a scene narrator for perceptions)."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        model: str,
        *,
        speakers: Iterable[str],
        fallback: TemplateNarrator | None = None,
        meter: SpendMeter | None = None,
        max_tokens: int = 2000,
        options: Mapping[str, Any] | None = None,
        policy: CallPolicy | None = None,
        items: Iterable[str] | None = None,
        capacities: Capacities | None = None,
    ) -> None:
        self.client = client
        self.capacities = capacities
        """Room at the endpoint per model (adapters/capacity.py), shared with the agents'
        mind where it speaks through the same model."""
        self.model = model
        self.speakers = frozenset(speakers)
        self.fallback = fallback or TemplateNarrator()
        self.meter = meter
        self.max_tokens = max_tokens
        """Room for a retelling, with what thinking a 5.x model does before it."""
        self.items = frozenset(shipped_items() if items is None else items)
        """Names of things in the world, checked wherever a retelling says them."""
        self.options = dict(options or {})
        """Added to every request (adapters/claude_models.py: max_tokens, the effort)."""
        self.policy = policy or CallPolicy(retries=1, timeout=20.0, retry_after_max=5.0)
        """A retelling is never worth holding the world for: one retry, and `timeout` for
        the whole of it, retry included."""
        self.rest_after_failure = 60.0
        """Seconds the templates stand alone after a failed retelling: an API that is down
        or slow is not asked again at every action."""
        self._quiet_until = 0.0
        self.clock = time.monotonic
        self.stopping: Callable[[], bool] = lambda: False
        """True once the run is stopping: the templates stand, nothing is asked."""
        self.told = 0
        """Narrations the model gave that were used."""
        self.kept_template = 0
        """Times the template stood instead (failure, budget, or a fact lost)."""
        self._spent: dict[str, list[dict[str, Any]]] = {}

    async def narrate(self, result: ActionResult, ctx: NarrationContext) -> str:
        plain = self.fallback.narrate_now(result, ctx)
        if ctx.agent not in self.speakers or not _worth_a_scene(result, ctx.action):
            return plain
        facts = f"What happened: {plain}"
        if plain.startswith(COLOUR_OPENINGS):  # the turn's first result: colour it once
            facts = (f"Time: {ctx.period}. Weather: "
                     f"{'indoors, sheltered' if ctx.indoors else ctx.weather.value}.\n{facts}")
        return await self._retell(ctx.agent, ctx.tick, ACTION_SYSTEM, facts, plain,
                                  plain, _data_names(result))

    async def describe(self, agent: str, tick: int, perception: Perception) -> str | None:
        """A retelling of the perception's narrative, or None to keep the template's."""
        if agent not in self.speakers or not perception.narrative:
            return None
        facts = (f"Time: {perception.time_text}. Weather: {perception.weather.value}.\n"
                 f"What is seen: {perception.narrative}")
        told = await self._retell(agent, tick, SCENE_SYSTEM, facts, perception.narrative,
                                  perception.narrative)
        return None if told == perception.narrative else told

    async def _retell(self, agent: str, tick: int, system: str, facts: str, plain: str,
                      checked: str, names: tuple[str, ...] = ()) -> str:
        if self.meter is not None and self.meter.reached() is not None:
            return self._keep(plain)
        now = self.clock()
        if now < self._quiet_until or self.stopping():
            return self._keep(plain)
        deadline = now + self.policy.timeout
        capacity = None if self.capacities is None else self.capacities.of(
            str(self.client.base_url), self.model)
        try:
            # Waiting for room counts against the retelling's own time: past it, the
            # template stands rather than hold up the turn.
            options = {"max_tokens": self.max_tokens, **self.options}
            reply = await ask(self.client, self.policy, deadline, clock=self.clock,
                              capacity=capacity, wait_moves_deadline=False,
                              stopping=lambda: self.stopping() or self.clock() > deadline,
                              resize=lambda: RequestPlan.sized(capacity, self.model, options),
                              **options,
                              model=self.model, system=system,
                              messages=[{"role": "user", "content": facts}])
        except CapacityClosed:  # no room in time, or stopping: the template stands
            return self._keep(plain)
        except (anthropic.APIError, GaveUp) as exc:
            self._quiet_until = self.clock() + self.rest_after_failure
            log.warning("narration by %s failed (%s); the templates stand for %.0f s",
                        self.model, describe(exc), self.rest_after_failure)
            return self._keep(plain)
        usage = Usage.of_reply(reply.usage)
        spent: dict[str, Any] = {"usage": usage.to_json()}
        if self.meter is not None:
            spent["usd"] = round(self.meter.add(agent, tick, self.model, usage), 6)
        self._spent.setdefault(agent, []).append(spent)
        told = " ".join(b.text for b in reply.content if getattr(b, "type", "") == "text")
        told = " ".join(told.split())
        if (reply.stop_reason != "end_turn" or not told
                or not keeps_facts(checked, told, names=names, items=self.items)):
            return self._keep(plain)
        self.told += 1
        return told

    def take_spend(self, agent: str) -> dict[str, Any] | None:
        """What narrating `agent`'s turn cost, for the turn's record (and forgotten here)."""
        requests = self._spent.pop(agent, None)
        return {"model": self.model, "requests": requests} if requests else None

    def _keep(self, plain: str) -> str:
        self.kept_template += 1
        return plain


@functools.cache
def shipped_items() -> frozenset[str]:
    """Every item the shipped config knows: the resources terrain yields and what recipes
    make (a world with its own recipes still has its data's names checked)."""
    config = load_config()
    return frozenset({r.name for r in config.recipes.recipes}
                     | {spec.gather for spec in config.terrain.terrains.values() if spec.gather})


_NAMES_IN_DATA = ("item", "output", "resource", "material", "recipient", "author",
                  "invitee", "terrain", "name")
"""Fields of a result's data that name a thing or an agent, which a retelling must keep."""


def _data_names(result: ActionResult) -> tuple[str, ...]:
    data: Any = result.data or {}
    names = [v for k in _NAMES_IN_DATA if type(v := data.get(k)) is str and v]
    returned = data.get("returned")  # remove_wall: [[item, count], ...]
    if isinstance(returned, list):
        names += [r[0] for r in returned
                  if isinstance(r, list | tuple) and r and type(r[0]) is str and r[0]]
    return tuple(names)


def _worth_a_scene(result: ActionResult, action: str) -> bool:
    data: Any = result.data
    return (not result.success or action in TOLD_BY_MODEL
            or bool(data and data.get("discoveries")))
