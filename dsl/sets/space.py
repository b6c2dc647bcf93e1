"""Search spaces: a strategy set with knobs, its constraints, and the concrete candidate
sets it stands for.

``Space(template, constraints)`` takes a :class:`StrategySet` whose fields hold knobs
(:mod:`tdsl.model.knobs`) and predicates over knob values. It reports its size (the
product of the knobs' sizes), enumerates assignments in a fixed order, samples them with a
seed, and yields :class:`Candidate` sets: each assignment that passes every constraint is
validated in full as a concrete set -- every field check and every target check (CPU tile
limits, gfx942 LDS, MMA and subgroup checks) -- before anything compiles. What was left
out, and why, is counted in :attr:`Space.pruned`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, Union

from ..errors import StrategyError, StrategyFileError
from ..model.knobs import Knob, KnobError, assignment_at, assignments, knob_size, merge, sample_indices
from .strategy_set import StrategySet

Values = dict[str, Any]
"""An assignment: {knob name: value}."""


@dataclass(frozen=True)
class Constraint:
    """A predicate over an assignment; an assignment it returns False for is pruned,
    counted under ``name``."""

    name: str
    predicate: Callable[[Values], bool]

    def __call__(self, values: Values) -> bool:
        return bool(self.predicate(values))


def constraint(predicate: Callable[[Values], bool]) -> Constraint:
    """A :class:`Constraint` named after the function (usable as a decorator)."""
    return Constraint(getattr(predicate, "__name__", "constraint"), predicate)


@dataclass(frozen=True)
class Candidate:
    """One concrete, fully validated set of a space: its assignment's index in the space's
    order, the knob values and the set."""

    index: int
    values: Values
    strategies: StrategySet


@dataclass
class Pruned:
    """Assignments left out, counted per reason: a constraint's name, or the field path of
    the first problem of a candidate that failed validation (with one example message)."""

    by_constraint: Counter[str] = field(default_factory=Counter)
    by_validation: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.by_constraint.values()) + sum(self.by_validation.values())

    def to_json(self) -> dict[str, object]:
        return {
            "total": self.total,
            "constraints": dict(self.by_constraint),
            "validation": {
                path: {"count": n, "example": self.examples[path]} for path, n in self.by_validation.items()
            },
        }

    def add(self, other: "Pruned") -> "Pruned":
        """Both counts together (the first example of each path)."""
        return Pruned(
            self.by_constraint + other.by_constraint,
            self.by_validation + other.by_validation,
            other.examples | self.examples,
        )

    def lines(self) -> list[str]:
        """One line per reason, most frequent first."""
        out = [f"{n} pruned by constraint {name}" for name, n in self.by_constraint.most_common()]
        out += [
            f"{n} failed validation at {path} (e.g. {self.examples[path]})"
            for path, n in self.by_validation.most_common()
        ]
        return out


class Space:
    """The candidates of ``template`` (a set with knobs) under ``constraints`` (each a
    :class:`Constraint` or a plain predicate, named after its function)."""

    def __init__(
        self, template: StrategySet, constraints: Sequence[Union[Constraint, Callable[[Values], bool]]] = ()
    ) -> None:
        if not isinstance(template, StrategySet):
            raise KnobError("template", "a StrategySet with knobs", type(template).__name__)
        self.template = template
        found = template.knobs()
        by_name = merge(found)
        names = list(dict.fromkeys(knob.name for knob in found.values()))  # as they appear
        self.knobs: tuple[Knob, ...] = tuple(by_name[n] for n in names)
        self.constraints = tuple(c if isinstance(c, Constraint) else constraint(c) for c in constraints)
        self.pruned = Pruned()
        self.seeds: list[Values] = []
        """Assignments known to be good (e.g. a ready library's), which a search tries first."""

    @property
    def size(self) -> int:
        """The number of assignments before constraints and validation."""
        return knob_size(self.knobs)

    def assignments(self) -> Iterator[Values]:
        """Every assignment, in the space's fixed order."""
        return assignments(self.knobs)

    def sample(self, count: int, seed: int = 0) -> list[tuple[int, Values]]:
        """``count`` distinct (index, assignment) pairs drawn with ``seed`` (all, in order,
        when the space is not larger)."""
        return [(i, assignment_at(self.knobs, i)) for i in sample_indices(self.size, count, seed)]

    def candidate(self, values: Values) -> StrategySet:
        """The concrete set for ``values`` (raises :class:`StrategyError` where it does not
        validate; constraints are not checked here)."""
        missing = [k.name for k in self.knobs if k.name not in values]
        if missing:
            raise KnobError("values", f"a value for every knob ({', '.join(missing)} missing)", repr(values))
        concrete: StrategySet = self.template.with_values(values)
        return concrete

    def neighbors(self, values: Values) -> Iterator[Values]:
        """The assignments one step away from ``values``: one knob moved to the value before
        or after its own in that knob's order (for a local search around a good point)."""
        for knob in self.knobs:
            options = knob.values()
            here = next((i for i, v in enumerate(options) if v == values.get(knob.name)), None)
            if here is None:
                continue
            for step in (-1, 1):
                if 0 <= here + step < len(options):
                    yield values | {knob.name: options[here + step]}

    def constrain(self, added: Constraint) -> None:
        """Adds ``added`` (once per name) to the constraints, for the candidates taken from
        now on (what a search learned of the program, e.g. :meth:`without_unmatched`)."""
        if all(c.name != added.name for c in self.constraints):
            self.constraints = (*self.constraints, added)

    def without_unmatched(self, values: Values, unmatched: Sequence[str]) -> Values | None:
        """The point that stands for ``values`` where its build's rules named ``unmatched``
        (strategy names) matched nothing in the program, with the constraint that says so
        added to the space; None where no such point exists (the default: a rule that
        reaches nothing makes a failed candidate)."""
        return None

    def index_of(self, values: Values) -> int:
        """The position of ``values`` in the space's order (the inverse of the enumeration)."""
        index = 0
        for knob in self.knobs:
            options = knob.values()
            index = index * len(options) + next(i for i, v in enumerate(options) if v == values[knob.name])
        return index

    def take(self, chosen: Iterator[tuple[int, Values]]) -> Iterator[Candidate]:
        """The candidates of the (index, assignment) pairs ``chosen`` that pass the constraints
        and validate; the others are counted in :attr:`pruned` (not reset)."""
        for index, values in chosen:
            failed = next((c.name for c in self.constraints if not c(values)), None)
            if failed is not None:
                self.pruned.by_constraint[failed] += 1
                continue
            try:
                strategies = self.candidate(values)
            except StrategyError as err:
                first = err.problems[0] if err.problems else None
                path = first.path if first else "?"
                self.pruned.by_validation[path] += 1
                self.pruned.examples.setdefault(path, f"expected {first.expected}" if first else str(err))
                continue
            yield Candidate(index, values, strategies)

    def candidates(self, count: int | None = None, seed: int = 0) -> Iterator[Candidate]:
        """Concrete candidates: every assignment in order, or ``count`` sampled with
        ``seed``; pruned ones are counted in :attr:`pruned` (reset by each call)."""
        self.pruned = Pruned()
        chosen = enumerate(self.assignments()) if count is None else iter(self.sample(count, seed))
        return self.take(chosen)


def load_space(spec: str) -> Space:
    """The space a file defines: a Python file's module-level :class:`Space` or
    :class:`StrategySet` with knobs (``FILE.py`` or ``FILE.py:NAME``), or a YAML / JSON set
    with knob mappings (:data:`tdsl.model.knobs.KNOB_SPELLINGS`; no constraints there)."""
    from .loader import DATA_SUFFIXES, load, python_object, split_spec

    path, name = split_spec(spec)
    if path.suffix not in (".py", *DATA_SUFFIXES):
        raise StrategyFileError(f"{path}: expected a .py, .yaml or .json file that defines a space")
    if not path.is_file():
        raise StrategyFileError(f"{path}: no such file")
    found = (
        python_object(path, name, (Space, StrategySet), "Space or StrategySet") if path.suffix == ".py" else load(path)
    )
    if isinstance(found, Space):
        space = found
    else:
        assert isinstance(found, StrategySet)
        space = Space(found)
    if not space.knobs:
        raise StrategyFileError(f"{path}: expected a space with at least one knob, received a set without knobs")
    return space
