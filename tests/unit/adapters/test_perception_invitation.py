"""An invitation says what accepting it would do, and that is what accepting does."""

from __future__ import annotations

import random

import numpy as np

from adapters.perception import PerceptionBuilder
from config import load_config
from core.agent import Agent
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.conversation_service import ConversationError
from services.simulation import build_simulation
from services.world_service import Clock, TerrainRules, WorldService

CONFIG = load_config(None)
NAMES = [AgentName(n) for n in ("Ash", "Birch", "Cedar", "Dusk", "Elm")]


def test_what_an_invitation_says_accepting_would_do_is_what_accepting_does():
    rng = random.Random(27)
    rules = TerrainRules.from_traits(CONFIG.terrain.terrains)
    checked = {"would fail": 0, "would start": 0, "would join": 0}
    for _ in range(60):
        world = WorldService(WorldState(8, 8, 1),
                             np.full((8, 8), TERRAIN_CODE[Terrain.GRASS], np.uint8), rules,
                             clock=Clock())
        agents = AgentService(world, [Agent(n, "m", "p", Position(rng.randrange(4),
                                                                  rng.randrange(4)))
                                      for n in NAMES])
        sim = build_simulation(world, CONFIG, agents, seed=1)
        talk = sim.conversations
        builder = PerceptionBuilder(world, agents, talk, sim.gathering)
        for _ in range(30):  # invitations, answers and departures, at random
            a, b = rng.sample(NAMES, 2)
            try:
                roll = rng.random()
                if roll < 0.5:
                    talk.create_invite(a, b, rng.choice(("public", "private", None)), 0)
                elif roll < 0.7:
                    talk.join_conversation(a, b, 0)
                else:
                    talk.leave_conversation(a, 0)
            except ConversationError:
                pass
            for name in NAMES:
                said = builder.build(name, 0).invitation_text
                if said is None or rng.random() < 0.7:
                    continue
                try:  # for real: the walk goes on from what accepting did
                    conv, _ = talk.accept_invite(name, 0)
                except ConversationError as refused:
                    assert "accepting would fail now: " in said, (said, refused)
                    assert str(refused).split(";")[0] in said, (said, refused)
                    checked["would fail"] += 1
                    talk.decline_invite(name, 0)
                    continue
                others = sorted(n for n in conv.participants if n != name)
                if "would start" in said:
                    assert len(conv.participants) == 2, said
                    checked["would start"] += 1
                else:
                    assert f"with {', '.join(others[:-1])}" in said or len(others) == 1, said
                    assert others[-1] in said and len(conv.participants) > 2, said
                    checked["would join"] += 1
                assert f"{conv.privacy} conversation" in said, said
    assert all(n >= 10 for n in checked.values()), checked
