"""Knobs: named sets of values a strategy field may hold instead of one value.

A knob stands where a value goes in any strategy model -- a tile size, a whole tile list,
an enumerated field, a matcher bound, even a whole rule -- and names the values to try::

    GraphCpuLowering(name="mm", distribution=[PowersOfTwo("wg_m", 8, 128), Choice("wg_n", [64, 128]), 0], ...)

A model built with knobs is validated structurally (with the knobs' first values, or the
first of a few seeded assignments that validate) and remembers where its knobs are
(:func:`knobs_of`); :class:`tdsl.sets.space.Space` turns such a set into concrete, fully
validated candidate sets. Knobs of one name are one knob: every place it stands gets the
same value. This module is plain Python (no pydantic): ``spec.base`` uses it.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from .. import errors

Path = tuple[object, ...]
"""Where a knob stands: field names and list indices from the model it was given to."""


class KnobError(errors.StrategyError):
    """A knob itself is malformed (empty, inverted range, two knobs of one name differ)."""

    def __init__(self, field: str, expected: str, received: str) -> None:
        super().__init__("knob", [errors.FieldProblem(field, expected, received)])


_SEEN = False


def seen() -> bool:
    """Whether any knob was ever built in this process (model validation skips the knob
    walk until one has been)."""
    return _SEEN


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise KnobError("name", "a knob name: a Python identifier such as 'tile_m'", repr(name))


@dataclass(frozen=True)
class Knob:
    """Base of every knob: a ``name`` and the values it takes, in a fixed order."""

    name: str

    def __post_init__(self) -> None:
        global _SEEN
        _check_name(self.name)
        if not self.values():
            raise KnobError(self.name, "at least one value", "none")
        _SEEN = True

    def values(self) -> tuple[object, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.values())


@dataclass(frozen=True)
class Choice(Knob):
    """One of ``options`` (numbers, strings, booleans, lists, whole strategy models)."""

    options: tuple[object, ...] = ()

    def __init__(self, name: str, options: Sequence[object]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "options", tuple(options))
        self.__post_init__()

    def values(self) -> tuple[object, ...]:
        return self.options


@dataclass(frozen=True)
class IntRange(Knob):
    """Integers ``lo, lo + step, ... <= hi``; with ``multiple_of``, only multiples of it."""

    lo: int = 0
    hi: int = 0
    step: int = 1
    multiple_of: int = 1

    def __init__(self, name: str, lo: int, hi: int, step: int = 1, multiple_of: int = 1) -> None:
        for field, value in (("lo", lo), ("hi", hi), ("step", step), ("multiple_of", multiple_of)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise KnobError(f"{name}.{field}", "an integer", repr(value))
        if step < 1 or multiple_of < 1:
            raise KnobError(f"{name}.step", "step and multiple_of of at least 1", f"{step}, {multiple_of}")
        if hi < lo:
            raise KnobError(f"{name}.hi", f"at least lo ({lo})", str(hi))
        object.__setattr__(self, "name", name)
        for attribute, number in (("lo", lo), ("hi", hi), ("step", step), ("multiple_of", multiple_of)):
            object.__setattr__(self, attribute, number)
        self.__post_init__()

    def values(self) -> tuple[int, ...]:
        return tuple(v for v in range(self.lo, self.hi + 1, self.step) if v % self.multiple_of == 0)


@dataclass(frozen=True)
class PowersOfTwo(Knob):
    """The powers of two from ``lo`` to ``hi`` (both powers of two, ``1 <= lo <= hi``)."""

    lo: int = 1
    hi: int = 1

    def __init__(self, name: str, lo: int, hi: int) -> None:
        for field, value in (("lo", lo), ("hi", hi)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value & (value - 1):
                raise KnobError(f"{name}.{field}", "a power of two of at least 1", repr(value))
        if hi < lo:
            raise KnobError(f"{name}.hi", f"at least lo ({lo})", str(hi))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        self.__post_init__()

    def values(self) -> tuple[int, ...]:
        return tuple(1 << e for e in range(self.lo.bit_length() - 1, self.hi.bit_length()))


@dataclass(frozen=True)
class KnobTuple(Knob):
    """A tuple of knobs taking values together: its values are the product of theirs, as
    lists (the value of a list field such as a tile list)."""

    knobs: tuple[Knob, ...] = ()

    def __init__(self, name: str, knobs: Sequence[Knob]) -> None:
        knobs = tuple(knobs)
        for i, knob in enumerate(knobs):
            if not isinstance(knob, Knob):
                raise KnobError(f"{name}.knobs[{i}]", "a knob", repr(knob))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "knobs", knobs)
        self.__post_init__()

    def values(self) -> tuple[object, ...]:
        return tuple(list(v) for v in itertools.product(*(k.values() for k in self.knobs)))


def knob_size(knobs: Sequence[Knob]) -> int:
    """The number of assignments of ``knobs`` (the product of their sizes)."""
    return math.prod(len(k) for k in knobs)


def assignments(knobs: Sequence[Knob]) -> Iterator[dict[str, object]]:
    """Every assignment {name: value} of ``knobs``, in a fixed order (the last knob varies
    fastest, each knob's values in their own order)."""
    names = [k.name for k in knobs]
    for values in itertools.product(*(k.values() for k in knobs)):
        yield dict(zip(names, values))


def assignment_at(knobs: Sequence[Knob], index: int) -> dict[str, object]:
    """The ``index``-th assignment of :func:`assignments`, computed directly."""
    picked: dict[str, object] = {}
    for knob in reversed(knobs):
        values = knob.values()
        index, rest = divmod(index, len(values))
        picked[knob.name] = values[rest]
    return {k.name: picked[k.name] for k in knobs}


def sample_indices(size: int, count: int, seed: int) -> list[int]:
    """``count`` distinct assignment indices below ``size`` (all of them, in order, when
    ``count >= size``), drawn with ``seed``: the same seed draws the same ones."""
    if count >= size:
        return list(range(size))
    return sorted(random.Random(seed).sample(range(size), count))


def merge(found: dict[Path, Knob]) -> dict[str, Knob]:
    """{name: knob} of the knobs found at paths; two different knobs of one name are an error."""
    by_name: dict[str, Knob] = {}
    for _path, knob in found.items():
        other = by_name.setdefault(knob.name, knob)
        if other != knob:
            raise KnobError(knob.name, f"one knob per name (the knob {knob.name!r} is also {other!r})", repr(knob))
    return by_name


KNOB_SPELLINGS = {
    "choice": (Choice, ("name", "values")),
    "int_range": (IntRange, ("name", "lo", "hi", "step", "multiple_of")),
    "powers_of_two": (PowersOfTwo, ("name", "lo", "hi")),
}
"""How a knob is written in YAML / JSON: a mapping ``{knob: choice, name: tile_m, values:
[8, 16]}`` (``int_range``: ``lo``, ``hi``, optional ``step`` and ``multiple_of``;
``powers_of_two``: ``lo``, ``hi``) where a value goes."""


def knobs_from_data(data: object, path: str = "") -> object:
    """``data`` (what a YAML/JSON file holds) with every knob mapping (:data:`KNOB_SPELLINGS`)
    turned into its knob; a malformed one raises :class:`KnobError` naming its path."""
    if isinstance(data, list):
        return [knobs_from_data(v, f"{path}[{i}]") for i, v in enumerate(data)]
    if not isinstance(data, dict):
        return data
    if "knob" not in data:
        return {k: knobs_from_data(v, f"{path}.{k}" if path else str(k)) for k, v in data.items()}
    kind = data["knob"]
    if kind not in KNOB_SPELLINGS:
        raise KnobError(f"{path}.knob", f"one of {', '.join(KNOB_SPELLINGS)}", repr(kind))
    cls, fields = KNOB_SPELLINGS[kind]
    extra = sorted(set(data) - {"knob", *fields})
    if extra:
        raise KnobError(path, f"a {kind} knob with the fields {', '.join(fields)}", f"unknown field {extra[0]!r}")
    args = {k: v for k, v in data.items() if k != "knob"}
    if kind == "choice":
        if not isinstance(args.get("values"), list):
            raise KnobError(f"{path}.values", "a list of the values to try", repr(args.get("values")))
        name: Any = args.get("name")  # Choice checks it is a name
        return Choice(name, args["values"])
    try:
        return cls(**args)
    except TypeError as err:
        raise KnobError(path, f"a {kind} knob with the fields {', '.join(fields)}", str(err)) from None
