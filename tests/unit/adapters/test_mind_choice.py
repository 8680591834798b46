"""Which mind speaks for each agent: --mind, then agents.yaml's `mind:`, then auto."""

from __future__ import annotations

import pytest

from adapters.mind_choice import MindChoiceError, mind_kinds
from config import ConfigError, load_agents, load_config

NAMES = ["Ember", "Sage", "River", "Agent4"]


def test_auto_is_claude_with_a_key_and_offline_without():
    assert set(mind_kinds(NAMES, {}, None, has_key=True).values()) == {"claude"}
    assert set(mind_kinds(NAMES, {}, None, has_key=False).values()) == {"offline"}


def test_agents_yaml_choices_hold_per_agent_and_generated_agents_take_auto():
    kinds = mind_kinds(NAMES, {"Ember": "offline", "Sage": "claude"}, None, has_key=True)
    assert kinds == {"Ember": "offline", "Sage": "claude", "River": "claude",
                     "Agent4": "claude"}


def test_the_flag_overrides_agents_yaml_for_everyone():
    kinds = mind_kinds(NAMES, {"Ember": "claude"}, "offline", has_key=True)
    assert set(kinds.values()) == {"offline"}


def test_claude_without_a_key_is_refused_with_the_fix():
    with pytest.raises(MindChoiceError, match="--mind claude, but ANTHROPIC_API_KEY is not set"):
        mind_kinds(NAMES, {}, "claude", has_key=False)
    with pytest.raises(MindChoiceError, match="agents.yaml gives Sage `mind: claude`"):
        mind_kinds(NAMES, {"Sage": "claude"}, None, has_key=False)


def test_an_unknown_choice_is_refused():
    with pytest.raises(MindChoiceError, match="--mind must be one of"):
        mind_kinds(NAMES, {}, "gpt", has_key=True)


def test_agents_yaml_rejects_an_unknown_mind(tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - name: Ember\n    model_id: m\n    personality: p\n    mind: telepathy\n")
    with pytest.raises(ConfigError, match="mind"):
        load_agents(path)
    path.write_text("agents:\n  - name: Ember\n    model_id: m\n    personality: p\n")
    assert load_agents(path).agents[0].mind == "auto"


def test_the_shipped_agents_take_auto():
    assert {a.mind for a in load_config(None).agents.agents} == {"auto"}


def test_a_local_model_needs_no_key_and_keeps_its_place_under_auto():
    configured = {"Ember": "local", "Sage": "auto"}
    assert mind_kinds(NAMES, configured, None, has_key=False) == {
        "Ember": "local", "Sage": "offline", "River": "offline", "Agent4": "offline"}
    assert mind_kinds(NAMES, configured, "auto", has_key=True)["Ember"] == "local"
    assert set(mind_kinds(NAMES, configured, "offline", has_key=True).values()) == {"offline"}


def test_agents_yaml_local_minds_need_an_endpoint(tmp_path):
    path = tmp_path / "agents.yaml"
    base = "agents:\n  - name: Ember\n    model_id: qwen3:8b\n    personality: p\n"
    path.write_text(base + "    mind: local\n")
    with pytest.raises(ConfigError, match="needs base_url"):
        load_agents(path)
    path.write_text(base + "    mind: local\n    base_url: localhost:11434\n")
    with pytest.raises(ConfigError, match="http:// or https://"):
        load_agents(path)
    path.write_text(base + "    base_url: http://localhost:11434/v1\n")
    with pytest.raises(ConfigError, match="go with mind: local"):
        load_agents(path)
    path.write_text(base + "    mind: local\n    base_url: http://localhost:11434/v1/\n"
                    "    api_key_env: OLLAMA_KEY\n")
    agent = load_agents(path).agents[0]
    assert (agent.base_url, agent.api_key_env) == ("http://localhost:11434/v1", "OLLAMA_KEY")
