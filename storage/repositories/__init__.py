"""Repositories: one per aggregate, each turning rows into domain values and back."""

from storage.repositories.agent import AgentRepository
from storage.repositories.conversation import ConversationRepository, StoredTurn
from storage.repositories.engine import EngineRepository
from storage.repositories.gardener import GardenerRepository
from storage.repositories.object import ObjectRepository
from storage.repositories.world import WorldRepository

__all__ = [
    "AgentRepository",
    "ConversationRepository",
    "EngineRepository",
    "GardenerRepository",
    "ObjectRepository",
    "StoredTurn",
    "WorldRepository",
]
