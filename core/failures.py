"""Why an action failed, as a small closed vocabulary.

The failure message says the particulars (which wall, how many planks); the reason
names the kind of failure, so that a narrator, a log or a test can act on it without
reading prose. Every failed ActionResult carries exactly one.
"""

from __future__ import annotations

from enum import StrEnum


class FailureReason(StrEnum):
    # -- who and what was asked
    NO_SUCH_AGENT = "no_such_agent"  # the actor, or the agent named, does not live here
    BAD_INPUT = "bad_input"  # malformed arguments, an unknown tool, text with nothing in it
    TOO_LONG = "too_long"  # a name or a text over its limit
    YOURSELF = "yourself"  # giving to, inviting or joining yourself
    # -- the actor's state
    ASLEEP = "asleep"
    TRAVELLING = "travelling"  # a journey is under way and needs the feet
    # -- space and movement
    WORLD_EDGE = "world_edge"  # the world ends on that side
    OUT_OF_BOUNDS = "out_of_bounds"  # a destination outside the world
    BLOCKED = "blocked"  # ground that cannot be crossed, stood on or built on (water)
    WALL_IN_WAY = "wall_in_way"  # a wall stands between here and there
    NO_PATH = "no_path"  # no route reaches it
    ALREADY_THERE = "already_there"  # already standing at, or beside, the goal
    TOO_FAR = "too_far"  # the other must be next to you
    NOT_VISIBLE = "not_visible"  # nothing or nobody by that name within sight
    NO_SUCH_PLACE = "no_such_place"  # no named place or landmark is called that
    # -- things
    NOTHING_HERE = "nothing_here"  # nothing (of that kind) lies there to take
    NOT_CARRYING = "not_carrying"  # you do not carry it, or not that many
    NOTHING_TO_GATHER = "nothing_to_gather"  # this ground yields nothing
    DEPLETED = "depleted"  # it yields, but is spent for now and grows back
    NO_RECIPE = "no_recipe"  # nothing comes of that combination or technique
    # -- building
    CANNOT_AFFORD = "cannot_afford"  # not enough material for a wall, door or shelter
    WALL_EXISTS = "wall_exists"
    NO_WALL = "no_wall"  # nothing to take down, or to fit a door into
    DOOR_EXISTS = "door_exists"
    ALREADY_SHELTERED = "already_sheltered"  # this cell is already walled and has a door
    # -- signs and names
    NO_SIGN = "no_sign"
    NAME_TAKEN = "name_taken"  # another place already has that name
    # -- conversation
    IN_CONVERSATION = "in_conversation"  # you, or they, are already talking
    NOT_IN_CONVERSATION = "not_in_conversation"  # you, or they, are not talking
    NO_INVITATION = "no_invitation"  # none pending, or it has lapsed
    ALREADY_INVITED = "already_invited"  # an invitation to them is already waiting
    PRIVATE_CONVERSATION = "private_conversation"  # joining it needs an invitation
    INVITATION_STALE = "invitation_stale"  # its talk ended, or its inviter left or moved on
    # -- the rest
    NOT_ALLOWED = "not_allowed"  # a rule said no, and no reason above fits better
    UNEXPECTED = "unexpected"  # a bug: the world is unchanged, and the error is logged
