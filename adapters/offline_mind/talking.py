"""Talking: answering invitations, inviting whoever is in view, lines in a conversation.

Consent is the other agent's: an invitation is sent and the turn ends, and the
answer comes on the invitee's own turn. Lines are short and come from words.py.
"""

from __future__ import annotations

from adapters.offline_mind import words
from adapters.offline_mind.basics import Script, Spec, WorkScript, ok

_new_tuple = tuple.__new__


class Talking:
    """Part of OfflineTurn (turn.py): uses its perception, persona, random source and memory."""

    __slots__ = ()

    def _answer(self, inviter: str) -> WorkScript:
        chance = 0.15 if self.p.period == "night" else self.persona.accept_chance
        if self.p.in_conversation_with or not self.rng.chance(chance):
            yield "decline_invite", {}
            return False
        out = yield "accept_invite", {}
        return ok(out)

    def _speech(self, other: str, *, first: bool) -> Spec:
        """The one call of a turn in a conversation (a call, not a script: a quarter of all
        turns are this, and the script yields it itself)."""
        topic = self._topic(other)
        if first:
            line = words.greeting(topic, self.rng)
        else:  # one line after another, never the same twice in a conversation
            line = words.remark(topic, self.rng, self.lines + self._day + len(other))
        return "speak", {"message": line}

    def _leave(self, other: str, *, night: bool) -> Script:
        topic = self._topic(other)
        line = words.goodnight(topic, self.rng) if night else words.farewell(topic, self.rng)
        yield "speak", {"message": line}
        yield "leave_conversation", {}

    def _socialise(self) -> WorkScript:
        """Invite someone in view (consent is theirs, on their own turn). True: wait for them."""
        persona, rng = self.persona, self.rng
        if self.p.in_conversation_with or not self.p.agents:
            return False
        for seen in self.p.agents:
            name = str(seen.name)
            if seen.is_sleeping or self._paused(name):
                continue
            if seen.in_conversation:
                if self.traits.social >= 0.5 and rng.chance(0.3):
                    out = yield "join_conversation", {"participant": name}
                    self._met(name)
                    if ok(out):
                        self.focus = "joined"
                        return True
                continue
            first = all(other != name for other, _ in self.met)
            if not rng.chance(persona.invite_chance + (0.3 if first else 0.0)):
                continue  # not this time; they may still be here next turn
            out = yield "invite", {"invitee": name}
            self._met(name)
            if ok(out):
                self.focus = "inviting"
                return True
        return False

    def _topic(self, other: str) -> words.Topic:
        visited = self.visited
        place = visited[-1] if visited else (self.p.landmarks[0].name if self.p.landmarks else "")
        recipes = self.recipes
        persona = self.persona
        # words.Topic(...) without the frame of its generated __new__: a quarter of all
        # turns make one.
        return _new_tuple(words.Topic, (
            persona.name, other, persona.dominant, place, recipes[-1][1] if recipes else "",
            self.heading, str(self.p.standing_on), self.home is not None,
        ))

    def _paused(self, other: str) -> bool:
        for name, tick in self.met:
            if name == other:
                return self.tick - tick < self.persona.invite_pause
        return False
