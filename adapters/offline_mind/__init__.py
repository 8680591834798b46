"""The offline mind: agents live without a language model, through the same tools.

    traits.py   personality text -> Traits, by counting words
    persona.py  traits -> fixed numbers per agent; building costs
    rng.py      a tiny random source per (seed, agent, tick)
    memory.py   what an agent remembers between turns (JSON state)
    state_text.py  that state as canonical JSON, re-encoding only changed fields
    view.py     the perception's cells by position; ways round obstacles in sight
    crafts.py   recipe keys, guesses, and what outcomes teach
    words.py    speech, signs, place names, journal lines
    basics.py   the shape of a script; compass sums
    turn.py     one turn: a script of tool calls; learning from outcomes
    talking.py  invitations and conversations     (mixins of the turn)
    writing.py  signs, place names, reading
    making.py   gathering, crafting, building
    walking.py  goals, the search spiral, ways round obstacles
    mind.py     OfflineMind, the services.mind.Mind, and what it keeps per agent
"""

from adapters.offline_mind.mind import OfflineMind
from adapters.offline_mind.traits import Traits, score_personality

__all__ = ["OfflineMind", "Traits", "score_personality"]
