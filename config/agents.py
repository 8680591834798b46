"""agents.yaml: who lives in the world, and which mind speaks for each of them."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, field_validator, model_validator

from config.base import NonBlankStr, _Model
from config.claude import EffortName
from core.types import agent_name

_COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")


def _color(raw: str) -> str:
    if not _COLOR_RE.fullmatch(raw):
        raise ValueError(f"color must be a hex colour like '#e07a5f', got {raw!r}")
    return raw


def _http_url(raw: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", raw):
        raise ValueError(f"must be an http:// or https:// address, got {raw!r}")
    return raw.rstrip("/")


AnyHttpUrlStr = Annotated[str, AfterValidator(_http_url)]


class AgentConfig(_Model):
    name: Annotated[str, AfterValidator(agent_name)]
    model_id: NonBlankStr
    personality: NonBlankStr
    color: Annotated[str, AfterValidator(_color)] | None = None
    mind: Literal["auto", "offline", "claude", "local", "seat"] = "auto"
    """Who speaks for the agent: Claude, the offline mind, Claude when a key is set, a
    model behind an OpenAI-compatible endpoint (`base_url`), or an outside agent that
    takes the seat over MCP (adapters/seats)."""
    effort: EffortName | None = None
    """How hard this agent's model thinks (5.x models); unset: settings.yaml's
    `claude.effort`."""
    base_url: AnyHttpUrlStr | None = None
    """For `mind: local`: the endpoint, like http://localhost:11434/v1 (Ollama)."""
    api_key_env: NonBlankStr | None = None
    """For `mind: local`: the environment variable holding the endpoint's key, if it needs
    one (the key itself never goes in a file)."""

    @model_validator(mode="after")
    def _local_needs_an_endpoint(self) -> AgentConfig:
        if self.mind == "local" and self.base_url is None:
            raise ValueError("mind: local needs base_url (the OpenAI-compatible endpoint, "
                             "like http://localhost:11434/v1)")
        if self.mind != "local" and (self.base_url or self.api_key_env):
            raise ValueError("base_url and api_key_env go with mind: local")
        return self


class AgentsConfig(_Model):
    """agents.yaml: who lives in the world."""

    agents: list[AgentConfig]

    @field_validator("agents")
    @classmethod
    def _unique_and_present(cls, agents: list[AgentConfig]) -> list[AgentConfig]:
        if not agents:
            raise ValueError("at least one agent is required")
        seen: dict[str, str] = {}
        for agent in agents:
            # Names become folder names, and some file systems ignore case.
            key = agent.name.casefold()
            if key in seen:
                raise ValueError(
                    f"duplicate agent name {agent.name!r}: {seen[key]!r} already exists "
                    "(names must differ ignoring case)"
                )
            seen[key] = agent.name
        return agents
