"""The narrator: an action's structured result, told to the agent as a short scene.

    text = TemplateNarrator().narrate_now(result, NarrationContext(...))
    # "In the morning rain, the wood comes away in your hands — you gather 1 wood
    #  from the forest."

A narration is one sentence: a clause of time and weather (on an agent's first
narrated action of a turn only), a framing clause chosen by the action (or, on
failure, by the FailureReason), a dash, and the engine's message unchanged. The
message is plain and complete, so keeping it whole is what keeps every mechanical
fact (which wall, how many left, what would work); the framing only gives it a place
and a mood.

Variants are chosen by a stable hash of (agent, tick, action), never at random, so
the same moment always reads the same. Everything is looked up in tables built at
import: `narrate_now` takes a couple of microseconds, as the engine narrates
thousands of actions a second. A language-model narrator will implement the same
`Narrator` protocol later, and can fall back on this one.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from string import Formatter
from typing import Any, Protocol

from core.actions import ActionResult
from core.events import AgentMovedEvent
from core.failures import FailureReason
from core.perception import Perception
from core.terrain import Weather
from core.types import AgentName, Position

PERIODS = ("morning", "afternoon", "evening", "night")
"""The names core.clock.TimeOfDay.period gives the parts of the day."""


@dataclass(frozen=True, slots=True)
class NarrationContext:
    """Where and when an action happened: what the narration may colour it with."""

    agent: AgentName
    tick: int
    position: Position
    period: str
    weather: Weather
    action: str
    """The tool name, e.g. "gather"; an unknown one (a model's typo) is allowed."""
    indoors: bool = False
    """Inside a structure: sheltered from the weather, so none is mentioned."""

    def __post_init__(self) -> None:
        if self.period not in PERIODS:
            raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {self.period!r}")
        if not isinstance(self.weather, Weather):
            object.__setattr__(self, "weather", Weather(self.weather))
        if self.tick < 0:
            raise ValueError(f"tick must be 0 or more, not {self.tick}")


def sheltered(structure_at: Callable[[Position], object | None], end: Position,
              events: Iterable[object]) -> bool:
    """Whether an action was done indoors: the agent ends it inside a structure and, if
    the action moved it, set out from inside that same structure. A walk home across open
    sand ends within walls, but was walked under the sky (issue 29): it is told so.

    `structure_at` is `WorldService.structure_at`; `events` the action's events, whose
    first AgentMovedEvent says where a move began."""
    here = structure_at(end)
    if here is None:
        return False
    for event in events:
        if type(event) is AgentMovedEvent:
            return structure_at(event.from_position) is here
    return True


class SceneNarrator(Protocol):
    """Retells what an agent sees (its perception's narrative) for a mind that reads it."""

    async def describe(self, agent: str, tick: int, perception: Perception) -> str | None:
        """The new narrative, or None to keep the one the perception has."""
        ...


class Narrator(Protocol):
    """Tells an agent what its action did. Async, so a model can do the telling.

    A narrator that never waits may also offer `narrate_now(result, ctx) -> str`, the
    same answer synchronously; the engine then calls that on its hot path.
    """

    async def narrate(self, result: ActionResult, ctx: NarrationContext) -> str: ...


@dataclass(frozen=True, slots=True)
class Frames:
    """The framing clauses for one action or failure reason.

    `rich` clauses name fields of the result's data (`needs`) and are used only when
    every one of those is present and printable; `plain` ones always fit. A clause
    starts lower-case: it follows the time-and-weather clause and a comma.
    """

    plain: tuple[str, ...]
    rich: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.plain:
            raise ValueError("frames need at least one plain clause")
        if any("{" in c or "}" in c for c in self.plain):
            raise ValueError("plain clauses are not formatted, so they cannot name fields")
        for clause in self.rich:
            named = {field for _, field, _, _ in Formatter().parse(clause) if field is not None}
            if named != set(self.needs):
                raise ValueError(f"{clause!r} names {sorted(named)}; needs is {self.needs}")
        if self.needs and not self.rich:
            raise ValueError("needs names fields, but there is no rich clause to use them")

    def pick(self, data: Mapping[str, Any], h: int) -> str:
        """A rich clause when the data allows it, else a plain one; `h` chooses which."""
        if self.rich:
            for key in self.needs:  # each must be a non-empty string or a number
                value = data.get(key)
                if type(value) is not int and not (type(value) is str and value):
                    return self.plain[h % len(self.plain)]
            # Values are inserted, never parsed: agent text cannot act as a template.
            return self.rich[h % len(self.rich)].format_map(data)
        return self.plain[h % len(self.plain)]


def _plain(*plain: str) -> Frames:
    return Frames(plain)


def _rich(needs: tuple[str, ...], rich: tuple[str, ...], *plain: str) -> Frames:
    return Frames(plain, rich, needs)


SUCCESS: Mapping[str, Frames] = {
    "walk": _rich(("terrain",), ("the {terrain} takes your weight",
                                 "you find your footing on the {terrain}"),
                  "you stride on", "your feet carry you onward"),
    "approach": _plain("you move with purpose", "step by step, you draw nearer"),
    "journey": _rich(("steps",), ("you fix the way in your mind, {steps} steps of it",),
                     "you set your face toward the horizon"),
    "examine": _rich(("terrain",), ("you study the {terrain} closely",
                                    "you crouch and look the {terrain} over"),
                     "you take a careful look"),
    "sense_others": _plain("you close your eyes and feel for the others",
                       "you listen inwardly for those you know"),
    "take": _rich(("item",), ("you stoop for the {item}",), "you stoop and pick it up"),
    "drop": _rich(("item",), ("you let the {item} go",), "you set your load down"),
    "give": _rich(("recipient", "item"), ("you hold the {item} out to {recipient}",),
                  "you hand it over"),
    "gather": _rich(("resource",), ("the {resource} comes away in your hands",
                                    "you work the {resource} free"),
                    "you bend to the work"),
    "combine": _rich(("output",), ("the pieces come together as {output}",),
                     "you fit the pieces together"),
    "work": _rich(("output",), ("the {output} takes shape under your hands",),
                  "you work with patient hands"),
    "apply": _rich(("output",), ("the tool bites, and {output} is the result",),
                   "you put the tool to use"),
    "build_shelter": _plain("you raise a small shelter around yourself",
                        "piece by piece, you close yourself in"),
    "place_wall": _rich(("material",), ("you set the {material} firmly in place",),
                        "you raise the wall"),
    "place_door": _rich(("material",), ("you hang a door of {material}",), "you fit the door"),
    "place_item": _rich(("item",), ("you set the {item} down with care",),
                        "you set it down with care"),
    "remove_wall": _plain("you pull the wall apart", "you take the wall down piece by piece"),
    "write_sign": _plain("you letter the sign with care", "you carve the words slowly"),
    "read_sign": _rich(("author",), ("you make out {author}'s hand",),
                       "you lean close to the sign"),
    "name_place": _plain("you look around and choose a name", "you give this spot a name"),
    "sleep": _plain("you settle down and let your eyes close", "you curl up to rest"),
    "speak": _plain("you find your words", "you speak up"),
    "invite": _rich(("invitee",), ("you catch {invitee}'s eye",), "you beckon"),
    "accept_invite": _plain("you nod and step closer", "you smile and join in"),
    "decline_invite": _plain("you shake your head politely", "you wave the offer away kindly"),
    "join_conversation": _plain("you step into the circle", "you join the talk"),
    "leave_conversation": _plain("you take your leave", "you step away from the talk"),
}
"""A framing for every action's success, by tool name."""

R = FailureReason
FAILURE: Mapping[str, Frames] = {
    R.NO_SUCH_AGENT: _plain("you look around for them, but no one answers to that name"),
    R.BAD_INPUT: _plain("you hesitate, unsure what you meant",
                        "the attempt falls apart in your hands"),
    R.TOO_LONG: _plain("it runs on far too long", "it is more than the world will hold"),
    R.YOURSELF: _plain("you reach out and find only yourself"),
    R.ASLEEP: _plain("you stir in your sleep, but do not wake"),
    R.TRAVELLING: _plain("your feet are already set on the road"),
    R.WORLD_EDGE: _plain("the land simply stops", "you stand at the very rim of the world"),
    R.OUT_OF_BOUNDS: _plain("that place lies beyond the world itself"),
    R.BLOCKED: _plain("the ground will not have it", "the land bars the way"),
    R.WALL_IN_WAY: _plain("a wall stands firm before you", "you come up against a wall"),
    R.NO_PATH: _plain("you look for a way, but find none"),
    R.ALREADY_THERE: _plain("you are already as close as you can be"),
    R.TOO_FAR: _plain("your arm does not reach that far"),
    R.NOT_VISIBLE: _plain("you peer about, but see no such thing", "your eyes search in vain"),
    R.NO_SUCH_PLACE: _plain("you search your memory for that name, but it stirs nothing"),
    R.NOTHING_HERE: _plain("your hands close on nothing", "you find nothing there to take"),
    R.NOT_CARRYING: _plain("you search your pack, but come up short"),
    R.NOTHING_TO_GATHER: _plain("you search the ground, but it has nothing to give"),
    R.DEPLETED: _plain("this spot has been picked clean", "only scraps are left here"),
    R.NO_RECIPE: _plain("you turn the pieces this way and that, but they will not cooperate"),
    R.CANNOT_AFFORD: _plain("you count your materials and come up short"),
    R.WALL_EXISTS: _plain("a wall already stands there"),
    R.NO_WALL: _plain("you reach for a wall that is not there"),
    R.DOOR_EXISTS: _plain("a door already hangs there"),
    R.ALREADY_SHELTERED: _plain("walls already stand all around you"),
    R.NO_SIGN: _plain("you look for a sign, but find none"),
    R.NAME_TAKEN: _plain("that name is already spoken for"),
    R.IN_CONVERSATION: _plain("a conversation is already under way"),
    R.NOT_IN_CONVERSATION: _plain("there is no conversation to speak into"),
    R.NO_INVITATION: _plain("you wait for an invitation that is not there"),
    R.ALREADY_INVITED: _plain("an invitation is already waiting"),
    R.PRIVATE_CONVERSATION: _plain("that conversation is closed to you"),
    R.INVITATION_STALE: _plain("the invitation no longer holds"),
    R.NOT_ALLOWED: _plain("the world does not allow it", "it cannot be done"),
    R.UNEXPECTED: _plain("something goes strangely wrong"),
}
"""A framing for every failure, by FailureReason."""

DEFAULT_SUCCESS = _plain("you do it")
"""For a tool name no table knows (none today; the narrator must not fail on one)."""

_OUTDOORS: Mapping[tuple[str, Weather], tuple[str, ...]] = {
    ("morning", Weather.CLEAR): ("In the bright morning air", "Under a clear morning sky"),
    ("morning", Weather.CLOUDY): ("Under a grey morning sky", "Beneath the low morning clouds"),
    ("morning", Weather.RAINY): ("In the morning rain", "With morning rain pattering around you"),
    ("morning", Weather.FOGGY): ("Through the morning fog", "In the pale morning mist"),
    ("afternoon", Weather.CLEAR): ("In the warm afternoon sun", "Under a wide afternoon sky"),
    ("afternoon", Weather.CLOUDY): ("Under flat afternoon clouds", "In the dull afternoon light"),
    ("afternoon", Weather.RAINY): ("In the steady afternoon rain",
                                   "With rain falling through the afternoon"),
    ("afternoon", Weather.FOGGY): ("In the afternoon haze", "Through the thick afternoon fog"),
    ("evening", Weather.CLEAR): ("In the golden evening light", "As the clear evening cools"),
    ("evening", Weather.CLOUDY): ("Under a darkening evening sky",
                                  "As clouds gather in the evening"),
    ("evening", Weather.RAINY): ("In the evening rain", "With rain falling as evening comes"),
    ("evening", Weather.FOGGY): ("In the evening mist", "As fog settles in for the evening"),
    ("night", Weather.CLEAR): ("Under the night stars", "By starlight"),
    ("night", Weather.CLOUDY): ("In the starless dark", "Under a black, clouded night"),
    ("night", Weather.RAINY): ("In the cold night rain", "In the dark, with rain all around"),
    ("night", Weather.FOGGY): ("In the foggy dark", "Through the night mist"),
}
_INDOORS: Mapping[str, tuple[str, ...]] = {
    "morning": ("Indoors, in the morning quiet", "Within your walls this morning"),
    "afternoon": ("Indoors, out of the afternoon", "Within your walls this afternoon"),
    "evening": ("Indoors as evening falls", "Within your walls this evening"),
    "night": ("Indoors in the dark of night", "Within your walls tonight"),
}
COLOUR: Mapping[tuple[str, Weather, bool], tuple[str, ...]] = {
    **{(period, weather, False): clauses for (period, weather), clauses in _OUTDOORS.items()},
    **{(period, weather, True): _INDOORS[period] for period in PERIODS for weather in Weather},
}
"""(period, weather, indoors) -> opening clauses. Indoors the weather is not felt."""

COLOUR_OPENINGS: tuple[str, ...] = tuple(sorted(
    {f"{clause}, " for clauses in COLOUR.values() for clause in clauses}))
"""How a coloured narration begins: `text.startswith(COLOUR_OPENINGS)`."""

AGENT_TEXT: Mapping[str, tuple[str, str]] = {
    "write_sign": ("text", "The words, exactly"),
    "read_sign": ("text", "The words, exactly"),
    "name_place": ("name", "The name, exactly"),
}
"""Tool name -> (the data field holding text an agent wrote, how to introduce it).

The engine quotes such text with repr, which escapes a backslash or a mix of quotes;
when that leaves the message without the text verbatim, the narration adds it."""


def stable_hash(ctx: NarrationContext) -> int:
    """The same for the same (agent, tick, action) in every process: crc32, because
    Python's own hash() of a string changes from run to run."""
    return zlib.crc32(f"{ctx.agent}\x1f{ctx.tick}\x1f{ctx.action}".encode())


class TemplateNarrator:
    """Narration from fixed tables: instant, deterministic, and always available.

    The time and weather colour an agent's first narrated action of a tick (its turn)
    only; the rest of the turn's results open with their framing clause. The perception
    already says the time and weather, so colour on every result only repeated it.
    """

    def __init__(self) -> None:
        self._coloured: dict[str, int] = {}
        """agent -> the last tick whose first narration was coloured."""

    def narrate_now(self, result: ActionResult, ctx: NarrationContext) -> str:
        """The narration, synchronously (the engine's hot path)."""
        action = ctx.action
        h = zlib.crc32(f"{ctx.agent}\x1f{ctx.tick}\x1f{action}".encode())  # stable_hash
        coloured = self._coloured.get(ctx.agent) != ctx.tick
        if coloured:
            self._coloured[ctx.agent] = ctx.tick
        frames = (SUCCESS.get(action, DEFAULT_SUCCESS) if result.success
                  else FAILURE.get(result.reason, _NOT_ALLOWED))
        message = result.message
        end = message[-1:]  # a full stop unless the message already ends a sentence
        if end in _ENDS or (end in _QUOTES and message[-2:-1] in _ENDS):
            stop = ""
        else:
            stop = "."
        data = result.data
        if frames.rich:
            clause = frames.pick(data, h >> 8)
        else:  # what pick answers for plain frames, without the call
            plain = frames.plain
            clause = plain[(h >> 8) % len(plain)]
        if coloured:
            colour = COLOUR[ctx.period, ctx.weather, ctx.indoors]
            text = f"{colour[h % len(colour)]}, {clause} — {message}{stop}"
        else:
            text = f"{clause[:1].upper()}{clause[1:]} — {message}{stop}"
        written = AGENT_TEXT.get(action)
        return text + _verbatim(data, message, *written) if written else text

    async def narrate(self, result: ActionResult, ctx: NarrationContext) -> str:
        return self.narrate_now(result, ctx)


_NOT_ALLOWED = FAILURE[R.NOT_ALLOWED]


_ENDS = (".", "!", "?")
_QUOTES = ("'", '"')
"""A message ending in one of _ENDS, or in one of _QUOTES just after one, already ends a
sentence and gets no full stop. Tuples: "" (an empty message's end) is in no tuple."""


def _verbatim(data: Mapping[str, Any], message: str, key: str, intro: str) -> str:
    """Agent-written text from the data, verbatim, when the message lacks it verbatim."""
    value = data.get(key)
    if type(value) is str and value and value not in message:
        return f" {intro}: “{value}”."
    return ""

