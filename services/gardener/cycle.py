"""One Gardener cycle: observe, triage, decide, then queue and record, in that order.

The cycle never touches the world itself: its requests go into the database, and the
engine judges and applies them at the start of its next tick. It is the same whether
the rules or a model decide, and whether it runs once (`--gardener --once`) or in a
loop (`services.gardener.loop`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.gardener import Caps, HealthFigures, Level, Thresholds, Triage, WorldHappening, triage
from core.types import Position
from services.gardener.decision import Decision, InvalidDecision
from services.gardener.fitting import happening_misfit
from services.gardener.rules import HAPPENINGS, decide_by_rules

logger = logging.getLogger(__name__)


class DeciderUnavailable(RuntimeError):
    """The model could not be asked (no budget left, the API failing): rules decide."""


class Decider(Protocol):
    """Whatever decides for a cycle besides the rules: a language model."""

    name: str

    async def decide(self, triage: Triage, figures: HealthFigures,
                     landmarks: Sequence[tuple[str, Position]],
                     memory: Sequence[Any]) -> Decision:
        """The decision, read strictly (InvalidDecision if the answer was not one;
        DeciderUnavailable if no answer could be had)."""
        ...


class CycleStore(Protocol):
    """Where cycles are recorded and requests queued (storage.gardener_db.GardenerStore)."""

    def add_cycle(self, tick: int, level: str, reasons_json: str, figures_json: str,
                  decided_by: str, decision_json: str, rationale: str, note: str | None,
                  requests: Sequence[tuple[str, str]]) -> int: ...

    def recent_cycles(self, limit: int) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class CycleReport:
    cycle: int
    tick: int
    triage: Triage
    decision: Decision
    decided_by: str
    note: str | None

    def summary(self) -> str:
        """One line for the terminal."""
        asked = "; ".join(i.describe() for i in self.decision.interventions) or "nothing"
        extra = f" ({self.note})" if self.note else ""
        return (f"cycle {self.cycle} at tick {self.tick}: {self.triage.level}, "
                f"{self.decided_by} asked for {asked}{extra}")


def figures_json(figures: HealthFigures) -> str:
    def plain(value: Any) -> Any:
        if isinstance(value, Position):
            return {"x": value.x, "y": value.y}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    data = {f.name: getattr(figures, f.name) for f in dataclasses.fields(figures)}
    data["agents"] = [{f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
                      for a in figures.agents]
    return json.dumps(plain(data), sort_keys=True)


def reasons_json(found: Triage) -> str:
    return json.dumps([{"level": str(r.level), "measure": r.measure, "agent": r.agent,
                        "text": r.text} for r in found.reasons])


async def run_cycle(figures: HealthFigures, landmarks: Sequence[tuple[str, Position]],
                    store: CycleStore, *, thresholds: Thresholds, caps: Caps,
                    decider: Decider | None, memory_cycles: int) -> CycleReport:
    """Triage `figures`, decide, queue the requests and record the cycle."""
    found = triage(figures, thresholds)
    note: str | None = None
    decided_by = "rules"
    decision: Decision | None = None
    if decider is not None and found.level > Level.HEALTHY:
        memory = store.recent_cycles(memory_cycles) if memory_cycles else []
        try:
            decision = await decider.decide(found, figures, landmarks, memory)
            decided_by = decider.name
        except InvalidDecision as exc:
            decided_by = decider.name
            note = f"the model's answer was refused: {exc}"
            decision = Decision((), "No intervention: the answer could not be used.")
            logger.warning("gardener: %s", note)
        except DeciderUnavailable as exc:
            note = f"the model was not asked ({exc}); the rules decided"
            logger.warning("gardener: %s", note)
    if decision is None:
        decision = decide_by_rules(found, figures, landmarks, caps)
    else:
        decision, refused = _held_to_place(decision, figures, caps)
        if refused:
            note = (note + "; " if note else "") + refused
    allowed = caps.per_cycle[int(found.level)]
    if len(decision.interventions) > allowed:
        decision = Decision(decision.interventions[:allowed], decision.rationale)
        note = (note + "; " if note else "") + f"only the first {allowed} kept at {found.level}"
    requests = [(i.kind, json.dumps(i.params(), sort_keys=True))
                for i in decision.interventions]
    cycle = store.add_cycle(figures.tick, str(found.level), reasons_json(found),
                            figures_json(figures), decided_by, decision.as_json(),
                            decision.rationale, note, requests)
    return CycleReport(cycle, figures.tick, found, decision, decided_by, note)


def _held_to_place(decision: Decision, figures: HealthFigures,
                   caps: Caps) -> tuple[Decision, str | None]:
    """A model's decision with each happening whose words do not fit its place (ground,
    weather, hour: fitting.py) replaced by a rule-made one at the same spot, and a note
    saying which and why (None if every one fits)."""
    kept, why = [], []
    for change in decision.interventions:
        wrong = None
        if isinstance(change, WorldHappening):
            wrong = happening_misfit(figures, change)
        if wrong is not None:
            text = HAPPENINGS[figures.tick % len(HAPPENINGS)][: caps.event_text_chars]
            change = dataclasses.replace(change, text=text)
            why.append(f"the model's event at ({change.position.x}, {change.position.y}) "
                       f"did not fit its place ({wrong}): a rule-made happening instead")
        kept.append(change)
    if not why:
        return decision, None
    return Decision(tuple(kept), decision.rationale), "; ".join(why)
