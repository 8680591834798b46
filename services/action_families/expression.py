"""write_sign, read_sign and name_place: words left in the world, cleaned and checked.
"""

from __future__ import annotations

from core.actions import ActionResult, NamePlaceAction, ReadSignAction, WriteSignAction
from core.agent import Agent
from core.constants import MAX_PLACE_NAME_LENGTH, MAX_SIGN_LENGTH
from core.events import PlaceNamedEvent, SignWrittenEvent
from core.objects import Sign
from core.places import NamedPlace
from core.text import clean_text
from core.types import Direction
from services.action_families.base import ActionFamily, R


class ExpressionActions(ActionFamily):
    def _write_sign(self, agent: Agent, action: WriteSignAction, tick: int) -> ActionResult:
        pos = self._aimed_cell(agent, action.direction)
        if pos != agent.position and not self.world.is_passable(pos):
            return ActionResult.fail("a sign needs ground to stand on", reason=R.BLOCKED)
        if pos != agent.position and self.world.edge_blocked(agent.position, action.direction):
            return ActionResult.fail(f"a wall stands to the {action.direction.value}",
                                     reason=R.WALL_IN_WAY)
        text = clean_text(action.text)
        if not text:
            return ActionResult.fail("the sign would be blank once unprintable characters go",
                                     reason=R.BAD_INPUT)
        if len(text) > MAX_SIGN_LENGTH:
            return ActionResult.fail(
                f"the sign's text is {len(text)} characters once normalised; the limit is "
                f"{MAX_SIGN_LENGTH}", reason=R.TOO_LONG,
            )
        existing = self.world.sign_at(pos)
        sign = Sign(existing.id if existing else self.new_id("sign"), pos, agent.name, tick,
                    text=text)
        if existing:
            self.world.replace_object(sign)
        else:
            self.world.add_object(sign)
        return ActionResult.ok(
            ("you rewrite the sign" if existing else "you write a sign") + f": {text!r}",
            [SignWrittenEvent(tick, agent.name, pos, text)], {"text": text},
        )

    def _read_sign(self, agent: Agent, action: ReadSignAction, tick: int) -> ActionResult:
        pos = self._target_cell(agent, action.direction)
        if pos is not None and pos != agent.position and self.world.edge_blocked(
            agent.position, action.direction
        ):
            return ActionResult.fail(
                f"a wall stands to the {action.direction.value}; you cannot read past it",
                reason=R.WALL_IN_WAY,
            )
        sign = self.world.sign_at(pos) if pos is not None else None
        if sign is None:
            where = "here" if action.direction is Direction.DOWN else (
                f"to the {action.direction.value}")
            return ActionResult.fail(f"there is no sign {where}", reason=R.NO_SIGN)
        by = f" (written by {sign.created_by})" if sign.created_by else ""
        return ActionResult.ok(f"the sign reads: {sign.text!r}{by}", (),
                               {"text": sign.text, "author": sign.created_by})

    def _name_place(self, agent: Agent, action: NamePlaceAction, tick: int) -> ActionResult:
        name = " ".join(clean_text(action.place_name).split())
        if not name:
            return ActionResult.fail("a place name needs some letters", reason=R.BAD_INPUT)
        if len(name) > MAX_PLACE_NAME_LENGTH:
            return ActionResult.fail(
                f"the place name is {len(name)} characters once normalised; the limit is "
                f"{MAX_PLACE_NAME_LENGTH}", reason=R.TOO_LONG,
            )
        taken = self.world.place_named(name) or self.world.landmark_named(name)
        if taken is not None:
            p = taken.position
            return ActionResult.fail(f"{name!r} already names the place at ({p.x}, {p.y})",
                                     reason=R.NAME_TAKEN)
        place = NamedPlace(name, agent.position, agent.name, tick)
        self.world.name_place(place)
        return ActionResult.ok(
            f"you name this place {place.name!r}",
            [PlaceNamedEvent(tick, agent.name, agent.position, place.name)], {"name": place.name},
        )
