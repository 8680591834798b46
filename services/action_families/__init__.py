"""The world's actions by family, one module each (their tests: tests/unit/services/actions/).

    movement.py    walk, approach, journey
    perception.py  examine, sense_others
    things.py      take, drop, give, place_item, gather
    crafting.py    combine, work, apply
    building.py    place_wall, place_door, remove_wall, build_shelter (and structures)
    expression.py  write_sign, read_sign, name_place
    state.py       sleep
    social.py      speak, invite, accept_invite, decline_invite, join_conversation,
                   leave_conversation
    base.py        what every family may use: the services, Refusal, the target cell

Each family is a class of handlers over `ActionFamily`'s services; `ActionEngine`
(services/action_engine.py) is built from all of them and keeps only the dispatch and the
checks every action shares (a known agent, names not too long, awake, not travelling).
(Not `services/actions/`: pytest's importlib mode would take the tests' package of that
path, tests/unit/services/actions/, for `services.actions`.)
"""
