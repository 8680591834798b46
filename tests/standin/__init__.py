"""A strict stand-in for the Anthropic Messages API (see tests/messages_standin.py)."""
