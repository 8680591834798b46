"""quick_init: the same values as a frozen dataclass's own __init__, made more cheaply."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from core.quick_init import quick_init


def _pair():
    """The same class twice: once with its generated __init__, once with quick_init."""

    def make(fast: bool):
        @dataclass(frozen=True, slots=True)
        class Base:
            tick: int

        @dataclass(frozen=True, slots=True)
        class Row(Base):
            name: str
            tags: list[str] = field(default_factory=list)
            size: int = 3
            made: tuple[int, ...] = field(default=(), init=False)
            note: str = field(default="", kw_only=True)

            def __post_init__(self) -> None:
                object.__setattr__(self, "made", (self.tick, len(self.tags)))

        return quick_init(Row) if fast else Row

    return make(False), make(True)


def _fields(value) -> dict:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@pytest.mark.parametrize("args, kwargs", [
    ((1, "a"), {}),
    ((2, "b", ["x"], 9), {"note": "n"}),
    ((), {"tick": 4, "name": "c", "size": 0}),
    ((5,), {"name": "d", "tags": ["p", "q"]}),
])
def test_the_same_fields_as_the_generated_init(args, kwargs) -> None:
    plain, quick = _pair()
    assert plain.__init__ is not quick.__init__
    a, b = plain(*args, **kwargs), quick(*args, **kwargs)
    assert _fields(a) == _fields(b)
    assert b.made == (b.tick, len(b.tags))  # __post_init__ ran


def test_each_value_gets_its_own_default_from_a_factory() -> None:
    _, quick = _pair()
    first, second = quick(1, "a"), quick(1, "b")
    assert first.tags == [] and first.tags is not second.tags


def test_wrong_arguments_fail_as_they_would() -> None:
    plain, quick = _pair()
    for cls in (plain, quick):
        with pytest.raises(TypeError):
            cls(1)  # no name
        with pytest.raises(TypeError):
            cls(1, "a", [], 3, "positional note")  # note is keyword-only
        with pytest.raises(TypeError):
            cls(1, "a", colour="red")


@quick_init
@dataclass(frozen=True, slots=True)
class Pickled:
    name: str
    tags: tuple[str, ...] = ()


def test_values_stay_frozen_comparable_replaceable_and_picklable() -> None:
    _, quick = _pair()
    value = quick(7, "e", ["t"], note="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "other"  # type: ignore[misc]
    assert dataclasses.replace(value, size=1).size == 1
    assert quick(7, "e", ["t"], note="x") == value
    kept = Pickled("p", ("a",))
    assert pickle.loads(pickle.dumps(kept)) == kept
    assert hash(kept) == hash(Pickled("p", ("a",)))


def test_only_frozen_slots_dataclasses_are_taken() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(slots=True)
    class NotFrozen:
        a: int

    for cls in (NoSlots, NotFrozen, int):
        with pytest.raises(TypeError, match="not a frozen slots dataclass"):
            quick_init(cls)


def test_an_init_written_by_hand_is_kept() -> None:
    @dataclass(frozen=True, slots=True)
    class Own:
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", a * 2)

    with pytest.raises(TypeError, match="of its own"):
        quick_init(Own)
    assert Own(2).a == 4


def test_a_twin_only_where_the_layouts_match() -> None:
    from core.quick_init import open_twin

    twin = open_twin(Pickled)
    assert twin is not None
    made = object.__new__(twin)
    made.name, made.tags = "t", ()
    made.__class__ = Pickled
    assert made == Pickled("t") and isinstance(made, Pickled)

    class Loose:
        pass

    @dataclass(frozen=True, slots=True)
    class WithDict(Loose):  # instances have a __dict__: no slots-only twin fits
        a: int

    assert open_twin(WithDict) is None
    assert open_twin(Loose) is None  # no slots at all
