"""Placing landmarks: the special places a new world is born with.

Each kind of landmark says which terrains it may stand on and, optionally,
which terrains must touch it (a reed bed on the coast next to open water).
Every landmark is a uniform draw, made with the caller's random generator,
among the cells that allow it, so the same generator state always gives the
same landmarks. The draw first tries random cells of the whole map, which
usually finds one in well under a millisecond; only when that fails (a rare
terrain, a crowded map) is the kind's full candidate mask built, with whole-array
numpy shifts over per-cell terrain bits. Both ways pick each fitting cell with
the same probability.

Spacing: every landmark keeps at least `min_distance` (Manhattan) from those
placed before it. When no fitting cell is that far away, the distance is halved
(20, 10, 5, 2, 1) until one is; a distance of 1 still keeps two landmarks off
the same cell. A kind with no fitting cell at all (a small world may have no
lake) is left out and a warning is logged on the "hearth.generation" logger.

Names: a landmark keeps the name of its kind ("the Old Tree") unless an earlier
landmark already has that name (ignoring case); then it gets the first free
suffix " (2)", " (3)", ..., so two old trees are "the Old Tree" and
"the Old Tree (2)", numbered in placement order.

This package may not import `config` (both sit on the same layer), so the rules
are read by duck typing: a `config.LandmarksConfig`, a mapping of kind to
spec, or a sequence of `LandmarkRule` (anything with `kind` and the spec's
fields), or of `(kind, spec)` pairs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.landmarks import Landmark
from core.terrain import TERRAIN_CODE, Terrain
from core.types import Position

logger = logging.getLogger("hearth.generation")

DEFAULT_MIN_DISTANCE = 20
"""Manhattan distance kept between landmarks when the map has room for it."""

_SAMPLE_BATCHES = (256, 1024, 4096)
"""Random cells tried at full spacing, batch by batch, before building the exact
candidate mask: a kind that fits one cell in a thousand is still found by sampling."""


class LandmarkSpecLike(Protocol):
    """What `place_landmarks` reads from one spec (config.LandmarkSpec fits)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def terrains(self) -> Sequence[Terrain | str]: ...

    @property
    def near(self) -> Sequence[Terrain | str]: ...

    @property
    def count(self) -> int: ...


class HasLandmarks(Protocol):
    """A whole landmarks file (config.LandmarksConfig fits): kind -> spec, in file order."""

    @property
    def landmarks(self) -> Mapping[str, LandmarkSpecLike]: ...


@dataclass(frozen=True)
class LandmarkRule:
    """One kind of landmark with its placement rules, independent of the config package."""

    kind: str
    name: str
    description: str
    terrains: tuple[Terrain, ...]
    near: tuple[Terrain, ...] = ()
    count: int = 1

    def __post_init__(self) -> None:
        if not self.kind or not self.name.strip():
            raise ValueError("a landmark rule needs a kind and a name")
        object.__setattr__(self, "terrains", _terrain_tuple(self.terrains, self.kind))
        object.__setattr__(self, "near", _terrain_tuple(self.near, self.kind))
        if not self.terrains:
            raise ValueError(f"landmark {self.kind!r} needs at least one terrain to stand on")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 0:
            raise ValueError(f"landmark {self.kind!r}: count must be an integer >= 0, "
                             f"got {self.count!r}")

    @classmethod
    def from_spec(cls, kind: str, spec: LandmarkSpecLike) -> LandmarkRule:
        return cls(
            kind=kind,
            name=spec.name,
            description=spec.description,
            terrains=tuple(spec.terrains),
            near=tuple(getattr(spec, "near", ()) or ()),
            count=getattr(spec, "count", 1),
        )


def _terrain_tuple(raw: Iterable[Terrain | str], kind: str) -> tuple[Terrain, ...]:
    if isinstance(raw, str):
        raw = (raw,)  # a lone name, not its letters
    try:
        return tuple(Terrain(item) for item in raw)
    except ValueError:
        names = ", ".join(t.value for t in Terrain)
        raise ValueError(
            f"landmark {kind!r}: unknown terrain in {list(raw)!r} (expected: {names})"
        ) from None


LandmarkSpecs = (
    HasLandmarks
    | Mapping[str, LandmarkSpecLike]
    | Sequence[LandmarkRule | tuple[str, LandmarkSpecLike]]
)
"""Every form `place_landmarks` accepts for its rules."""


def landmark_rules(specs: LandmarkSpecs) -> list[LandmarkRule]:
    """Normalise the accepted forms of `specs` (see the module doc) to rules, in order."""
    entries: Any = getattr(specs, "landmarks", specs)
    if isinstance(entries, Mapping):
        return [LandmarkRule.from_spec(str(kind), spec) for kind, spec in entries.items()]
    rules: list[LandmarkRule] = []
    for item in entries:
        if isinstance(item, LandmarkRule):
            rules.append(item)
        elif isinstance(item, tuple) and len(item) == 2:
            rules.append(LandmarkRule.from_spec(str(item[0]), item[1]))
        else:
            rules.append(LandmarkRule.from_spec(str(item.kind), item))
    return rules


# --------------------------------------------------------------------------- the map

_NEIGHBOURS: tuple[tuple[int, int], ...] = tuple(
    (dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)
)


def _neighbour_bits(bits: np.ndarray) -> np.ndarray:
    """Each cell's OR of the bits of its 8 neighbours (the cell itself does not count)."""
    sides = np.zeros_like(bits)
    sides[:, 1:] |= bits[:, :-1]
    sides[:, :-1] |= bits[:, 1:]
    band = sides | bits  # the three cells of each row around a column
    out = sides
    out[1:, :] |= band[:-1, :]
    out[:-1, :] |= band[1:, :]
    return out


def _bit_set(kinds: Iterable[Terrain]) -> np.uint8:
    return np.uint8(sum(1 << TERRAIN_CODE[kind] for kind in set(kinds)))


def _lookup(kinds: Iterable[Terrain]) -> np.ndarray:
    """A table indexed by terrain code: True for the given kinds."""
    table = np.zeros(256, dtype=bool)
    table[[TERRAIN_CODE[kind] for kind in kinds]] = True
    return table


class _Map:
    """One terrain map with its constraints, and masks computed once for every rule."""

    def __init__(
        self, terrain: np.ndarray, reachable: np.ndarray | None, avoid: Iterable[Position]
    ) -> None:
        self.terrain = terrain
        self.height, self.width = terrain.shape
        self.flat = terrain.ravel()
        self.reachable: np.ndarray | None = None
        if reachable is not None:
            reachable = np.asarray(reachable)
            if reachable.shape != terrain.shape:
                raise ValueError(
                    f"reachable has shape {reachable.shape}, "
                    f"but the terrain has shape {terrain.shape}"
                )
            self.reachable = reachable.astype(bool, copy=False)
        self.avoid = np.array(
            sorted({p.y * self.width + p.x for p in avoid
                    if 0 <= p.x < self.width and 0 <= p.y < self.height}),
            dtype=np.int64,
        )
        self._bits: np.ndarray | None = None
        self._neighbour_bits: np.ndarray | None = None

    # ---- whole-map masks, for the exact search

    @property
    def bits(self) -> np.ndarray:
        """1 << code for every cell: a set of terrains is then one bit mask."""
        if self._bits is None:
            self._bits = np.left_shift(np.uint8(1), self.terrain.astype(np.uint8, copy=False))
        return self._bits

    @property
    def neighbour_bits(self) -> np.ndarray:
        """Every cell's set of terrains among its 8 neighbours, as bits."""
        if self._neighbour_bits is None:
            self._neighbour_bits = _neighbour_bits(self.bits)
        return self._neighbour_bits

    def candidates(self, rule: LandmarkRule) -> np.ndarray:
        """Flat indices of every cell the rule allows, ignoring spacing."""
        allowed = (self.bits & _bit_set(rule.terrains)) != 0
        if rule.near:
            allowed &= (self.neighbour_bits & _bit_set(rule.near)) != 0
        if self.reachable is not None:
            allowed &= self.reachable
        flat = allowed.ravel()
        flat[self.avoid] = False
        return np.flatnonzero(flat)

    # ---- the same rules for a handful of cells, for the quick search

    def allows(self, cells: np.ndarray, on: np.ndarray, near: np.ndarray | None) -> np.ndarray:
        """Which of the flat indices `cells` the rule (as code lookup tables) allows."""
        fits = on[self.flat[cells]]
        ys, xs = np.divmod(cells, self.width)
        if near is not None:
            touching = np.zeros(cells.shape, dtype=bool)
            for dy, dx in _NEIGHBOURS:
                ny, nx = ys + dy, xs + dx
                inside = (ny >= 0) & (ny < self.height) & (nx >= 0) & (nx < self.width)
                ny = np.minimum(np.maximum(ny, 0), self.height - 1)
                nx = np.minimum(np.maximum(nx, 0), self.width - 1)
                touching |= inside & near[self.terrain[ny, nx]]
            fits &= touching
        if self.reachable is not None:
            fits &= self.reachable[ys, xs]
        if self.avoid.size:
            fits &= ~np.isin(cells, self.avoid)
        return fits


# --------------------------------------------------------------------------- placement


def place_landmarks(
    terrain: np.ndarray,
    specs: LandmarkSpecs,
    rng: np.random.Generator,
    *,
    reachable: np.ndarray | None = None,
    avoid: Iterable[Position] = (),
    min_distance: int = DEFAULT_MIN_DISTANCE,
) -> list[Landmark]:
    """Place every landmark `specs` asks for on `terrain`, in spec order.

    terrain:      terrain codes (core.terrain.TERRAIN_CODE), shape (height, width), [y, x].
    specs:        a config.LandmarksConfig, a mapping kind -> spec, or a sequence of
                  LandmarkRule / (kind, spec) pairs.
    rng:          the only source of randomness: the same state gives the same result.
    reachable:    optional bool mask of the same shape; landmarks go only where it is True.
    avoid:        cells no landmark may take (agents' starting cells, say).
    min_distance: Manhattan spacing between landmarks, halved down to 1 when nothing fits.

    Every landmark is drawn uniformly among the cells that allow it and keep the
    widest spacing reachable by halving. Returns the placed landmarks in
    placement order; kinds that fit nowhere are left out with a warning.
    """
    terrain = np.asarray(terrain)
    if terrain.ndim != 2 or terrain.size == 0:
        raise ValueError(f"terrain must be a non-empty 2-D array, got shape {terrain.shape}")
    if not np.issubdtype(terrain.dtype, np.integer):
        raise ValueError(f"terrain must hold integer terrain codes, got dtype {terrain.dtype}")
    low, high = int(terrain.min()), int(terrain.max())
    if low < 0 or high >= len(TERRAIN_CODE):
        raise ValueError(
            f"terrain codes must be 0..{len(TERRAIN_CODE) - 1}, found {low if low < 0 else high}"
        )
    if isinstance(min_distance, bool) or not isinstance(min_distance, int) or min_distance < 1:
        raise ValueError(f"min_distance must be an integer >= 1, got {min_distance!r}")
    rules = landmark_rules(specs)
    world = _Map(terrain, reachable, avoid)

    placed: list[Landmark] = []
    xs: list[int] = []
    ys: list[int] = []
    used_names: set[str] = set()
    for rule in rules:
        on = _lookup(rule.terrains)
        near = _lookup(rule.near) if rule.near else None
        candidates: np.ndarray | None = None  # computed only if quick sampling fails
        for copy in range(rule.count):
            cell = _sample(world, on, near, xs, ys, rng, min_distance)
            if cell is None:
                if candidates is None:
                    candidates = world.candidates(rule)
                cell = _search(candidates, world.width, xs, ys, rng, min_distance)
            if cell is None:
                _warn_skipped(rule, copy, 0 if candidates is None else candidates.size,
                              reachable is not None)
                break  # later copies of this kind would not fit either
            y, x = divmod(cell, world.width)
            name = _distinct_name(rule.name, used_names)
            placed.append(Landmark(rule.kind, name, rule.description, Position(x, y)))
            xs.append(x)
            ys.append(y)
    return placed


def _spacing(cells: np.ndarray, width: int, xs: list[int], ys: list[int]) -> np.ndarray:
    """Each cell's Manhattan distance to its nearest placed landmark (cells must be int64)."""
    cy, cx = np.divmod(cells, width)
    nearest = np.abs(cx - xs[0]) + np.abs(cy - ys[0])
    for x, y in zip(xs[1:], ys[1:], strict=True):
        np.minimum(nearest, np.abs(cx - x) + np.abs(cy - y), out=nearest)
    return nearest


def _sample(
    world: _Map,
    on: np.ndarray,
    near: np.ndarray | None,
    xs: list[int],
    ys: list[int],
    rng: np.random.Generator,
    min_distance: int,
) -> int | None:
    """Try random cells of the whole map at full spacing.

    The first one that fits is a uniform draw among all cells that fit; usually
    one does, and then no whole-map mask is ever computed.
    """
    for size in _SAMPLE_BATCHES:
        cells = rng.integers(world.flat.size, size=size, dtype=np.int64)
        fits = world.allows(cells, on, near)
        if xs:
            fits &= _spacing(cells, world.width, xs, ys) >= min_distance
        if fits.any():
            return int(cells[int(np.argmax(fits))])
    return None


def _search(
    candidates: np.ndarray,
    width: int,
    xs: list[int],
    ys: list[int],
    rng: np.random.Generator,
    min_distance: int,
) -> int | None:
    """A uniform draw among all candidates keeping the widest spacing (halving down to 1)."""
    n = candidates.size
    if n == 0:
        return None
    if not xs:
        return int(candidates[rng.integers(n)])
    nearest = _spacing(candidates.astype(np.int64, copy=False), width, xs, ys)
    distance = min_distance
    while True:
        fits = nearest >= distance
        count = int(np.count_nonzero(fits))
        if count:
            if distance < min_distance:
                logger.debug("landmark spacing relaxed from %d to %d", min_distance, distance)
            return int(candidates[np.flatnonzero(fits)[rng.integers(count)]])
        if distance == 1:
            return None  # every fitting cell already holds a landmark
        distance = max(1, distance // 2)


def _distinct_name(name: str, used: set[str]) -> str:
    """The name itself if free (ignoring case), else the first free "name (n)", n >= 2."""
    candidate, n = name, 1
    while candidate.casefold() in used:
        n += 1
        candidate = f"{name} ({n})"
    used.add(candidate.casefold())
    return candidate


def _warn_skipped(rule: LandmarkRule, placed: int, candidates: int, has_reachable: bool) -> None:
    cell = " or ".join(t.value for t in rule.terrains) + " cell"
    beside = " next to " + " or ".join(t.value for t in rule.near) if rule.near else ""
    if candidates:
        reason = f"every fitting {cell}{beside} already holds a landmark"
    elif has_reachable:
        reason = f"no reachable {cell}{beside}"
    else:
        reason = f"no {cell}{beside}"
    outcome = f"placed {placed} of {rule.count}" if placed else "left out"
    logger.warning("landmark %r (%s) %s: %s", rule.kind, rule.name, outcome, reason)
