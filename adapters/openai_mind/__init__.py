"""Minds behind any OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp)."""

from adapters.openai_mind.clients import local_client
from adapters.openai_mind.mind import OpenAIMind, OpenAIMindError, OpenAIProfile

__all__ = ["OpenAIMind", "OpenAIMindError", "OpenAIProfile", "local_client"]
