"""What an agent is told when someone leaves its conversation, or it ends under it (issue 27)."""

from __future__ import annotations

from adapters.perception_text import describe_conversation
from core.conversation import Conversation, ConversationTurn, Privacy
from core.types import AgentName, ConversationId
from services.conversation_service import ConversationContext

EMBER, MOSS, RIVER = AgentName("Ember"), AgentName("Moss"), AgentName("River")
CID = ConversationId("c1")


def test_the_one_left_behind_hears_the_last_words_then_the_end() -> None:
    conv = Conversation(CID, frozenset({RIVER}), Privacy.PRIVATE, 1, EMBER).ended(4)
    said = (ConversationTurn(CID, EMBER, "Farewell, River.", 4),)
    text = describe_conversation(ConversationContext(RIVER, conv, (), said, None, (EMBER,),
                                                     ended=True))
    assert text == ("You were in a private conversation.\nSince your last turn:\n"
                    "  Ember: Farewell, River.\nEmber left; the conversation ended.")
    quiet = describe_conversation(ConversationContext(RIVER, conv, (), (), None, (EMBER,),
                                                      ended=True))
    assert quiet == "You were in a private conversation. Ember left; the conversation ended."


def test_those_who_remain_hear_who_left() -> None:
    conv = Conversation(CID, frozenset({RIVER, MOSS}), Privacy.PUBLIC, 1, EMBER)
    said = (ConversationTurn(CID, EMBER, "Bye.", 4),)
    text = describe_conversation(ConversationContext(RIVER, conv, (MOSS, RIVER), said, None,
                                                     (EMBER,)))
    assert text.endswith("  Ember: Bye.\nEmber left.")
    assert text.startswith("You are in a public conversation with Moss.")
    quiet = describe_conversation(ConversationContext(RIVER, conv, (MOSS, RIVER), (), None,
                                                      (EMBER,)))
    assert quiet.endswith("Nothing new has been said since your last turn. Ember left.")


def test_an_ended_conversation_is_told_before_the_new_one() -> None:
    old = Conversation(CID, frozenset({RIVER}), Privacy.PUBLIC, 1, EMBER).ended(4)
    new = Conversation(ConversationId("c2"), frozenset({RIVER, MOSS}), Privacy.PUBLIC, 4, RIVER)
    earlier = ConversationContext(RIVER, old, (), (), None, (EMBER,), ended=True)
    text = describe_conversation(ConversationContext(RIVER, new, (MOSS, RIVER), (), None,
                                                     earlier=earlier))
    assert text == ("You were in a public conversation. Ember left; the conversation ended.\n"
                    "You are in a public conversation with Moss. Nothing new has been said "
                    "since your last turn.")
