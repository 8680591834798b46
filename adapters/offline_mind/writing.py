"""Writing in the world: signs at landmarks and homes, names for places, reading signs.

A sign at the agent's haunt says "I come back here every evening" (words.RETURNING),
which is how others who read it learn where to find company.
"""

from __future__ import annotations

from adapters.offline_mind import words
from adapters.offline_mind.basics import Pos, Script, WorkScript, ok, toward
from adapters.offline_mind.memory import MAX_TEXT, MAX_VISITED, WROTE, capped
from core.perception import SeenLandmark


class Writing:
    """Part of OfflineTurn (turn.py): uses its perception, persona, random source and memory."""

    __slots__ = ()

    def _here(self) -> WorkScript:
        """Something worth doing right where it stands: a landmark, a sign, a sensing.

        True when it did one, and that is this turn's business (one call a turn)."""
        visited = self.visited
        for mark in self.p.landmarks:
            if mark.distance <= 1:
                if mark.name not in visited:
                    yield from self._visit(mark)
                    return True
                target = self.target
                if target is not None and target[0] == mark.name:
                    self.target = None  # back at a landmark it came to see again
                if mark.name == self.haunt and (yield from self._sign_landmark(mark, 1.0)):
                    return True
                break
        if self.p.objects and (yield from self._read_signs_nearby()):
            return True
        if (self.traits.social >= 0.5 and self.met and not self.p.agents
                and self._chasing() is None and self.rng.chance(0.1)):
            # Costs the world nothing and only turns its heading: the turn goes on.
            yield "sense_others", {}
        return False

    def _read_signs_nearby(self) -> WorkScript:
        objects = self.p.objects
        if not objects:
            return False
        read = self.read
        for obj in objects:
            if obj.kind != "sign" or obj.distance > 1:
                continue
            pos = (obj.position.x, obj.position.y)
            at_landmark = any(abs(m.position.x - pos[0]) + abs(m.position.y - pos[1]) <= 1
                              for m in self.p.landmarks)
            # Signs at landmarks are always read: they tell who else comes here.
            if pos in read or not (at_landmark
                                   or self.rng.chance(0.5 + 0.5 * self.traits.writer)):
                continue
            dx, dy = pos[0] - self.x, pos[1] - self.y
            yield "read_sign", {"direction": toward(dx, dy)[0] if dx or dy else "down"}
            return True
        return False

    def _visit(self, mark: SeenLandmark) -> Script:
        """Arrive at a landmark: remember it, perhaps leave a sign for whoever comes next."""
        self.visited = capped(self.visited, mark.name[:MAX_TEXT], MAX_VISITED)
        if self.target is not None and self.target[0] == mark.name:
            self.target = None
        self._note(f"reached {mark.name}")
        writer = self.traits.writer
        chance = 0.5 + 0.5 * writer if self.done & WROTE else 0.9
        if mark.name == self.haunt:
            chance = 1.0  # its own place: say so, for whoever comes by
        if (yield from self._sign_landmark(mark, chance)):
            return
        # Someone signed it first (the landmark everyone woke in sight of): one who has
        # written nothing anywhere yet names its own corner of it instead.
        if not self.done & WROTE or self.rng.chance(0.2 + 0.6 * writer):
            name = (f"{self.persona.name}'s View of {mark.name}" if self.rng.chance(0.5)
                    else None)
            yield from self._name_here(name)

    def _sign_landmark(self, mark: SeenLandmark, chance: float) -> WorkScript:
        """Write on the landmark's cell, if no sign stands there yet. True: written."""
        pos = (mark.position.x, mark.position.y)
        if self._sign_at(pos) or not self.rng.chance(chance):
            return False
        dx, dy = pos[0] - self.x, pos[1] - self.y
        direction = toward(dx, dy)[0] if dx or dy else "down"
        note = words.surroundings_note(self.view.terrain_counts())
        text = words.landmark_sign(self.persona.name, mark.name, self._day, note,
                                   self.rng, haunt=mark.name == self.haunt)
        return ok((yield "write_sign", {"text": text, "direction": direction}))

    def _name_here(self, name: str | None = None) -> WorkScript:
        for _name, x, y in self.named:
            if abs(x - self.x) + abs(y - self.y) <= 6:
                return False  # it named somewhere close already
        name = name or words.place_name(str(self.p.standing_on), self.rng)
        yield "name_place", {"place_name": name[:60]}
        return True

    def _write_here(self) -> WorkScript:
        """A writer's moment: the home sign, a sign at a varied spot, or a name for it.
        True: it wrote (or tried to)."""
        here = (self.x, self.y)
        if self.home == here and not self._sign_at(here):
            yield "write_sign", {"text": words.home_sign(self.persona.name, self.rng)}
            return True
        counts = self.view.terrain_counts()
        varied = len(counts) >= 3
        if varied and not self._wrote_near(8) and self.rng.chance(0.6):
            note = words.surroundings_note(counts)
            out = yield "write_sign", {"text": words.spot_sign(self.persona.name, note, self.rng)}
            if ok(out):
                return True
        if varied or not self.done & WROTE:
            return (yield from self._name_here())
        return False

    def _sign_at(self, pos: Pos) -> bool:
        for obj in self.p.objects:
            if obj.kind == "sign" and obj.position.x == pos[0] and obj.position.y == pos[1]:
                return True
        return pos in self.wrote

    def _wrote_near(self, radius: int) -> bool:
        for x, y in self.wrote:
            if abs(x - self.x) + abs(y - self.y) <= radius:
                return True
        return self._sign_at((self.x, self.y))
