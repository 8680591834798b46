"""Claude minds: a Claude model speaks for an agent through the Messages API's tool use."""

from adapters.claude_mind.mind import ClaudeMind, ClaudeMindError, ClaudeProfile

__all__ = ["ClaudeMind", "ClaudeMindError", "ClaudeProfile"]
