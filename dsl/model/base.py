"""Base model and field types shared by every strategy concept.

Every strategy value is a frozen pydantic model with ``extra="forbid"``. Convenient
spellings are accepted at the edge and canonicalised once by validators here, so
templates only see canonical data. Validation failures become
:class:`tdsl.errors.StrategyError` naming the strategy, the field path, what was
expected and what was received.
"""

from __future__ import annotations

import contextvars
import difflib
import json
import re
import types
import typing
from typing import Annotated, Any, ClassVar, Iterable, Sequence, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, PrivateAttr, Strict, ValidationError
from pydantic_core import ErrorDetails

from ..errors import FieldProblem, StrategyError
from . import knobs as _knobs
from .knobs import Knob
from .messages import Described as Described  # re-exported: validators import these from here
from .messages import fmt as fmt
from .messages import one_line as one_line
from .messages import problem as problem

# Whole-string patterns: always used with ``fullmatch`` (``$`` in ``match`` would accept a
# trailing newline).
SYMBOL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OP_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+")

I64_MAX = 2**63 - 1
"""The largest value of an MLIR ``i64`` attribute (tile sizes, dims, packed sizes)."""
MAX_RANK = 16
"""The most loops of an op, dims of a tensor or entries of a tile list tdsl accepts."""
MAX_OPERANDS = 32
"""Operand indices (``promote_operands``) are below this."""
MAX_THREADS = 65536
"""The most threads along one workgroup dimension (the target checks the real limit)."""


def is_symbol(value: object) -> bool:
    """``value`` is a string that is an MLIR symbol name (what ``SymbolName`` accepts)."""
    return isinstance(value, str) and SYMBOL_RE.fullmatch(value) is not None


def _symbol(value: str) -> str:
    if not SYMBOL_RE.fullmatch(value):
        raise problem(
            "",
            "an MLIR symbol name: a letter or '_' then letters, digits or '_'",
            value,
        )
    return value


MARKER_RE = re.compile(r"__[A-Za-z0-9_]+_applied__")
"""A marker annotation as IREE's specs spell it: ``__custom_tuning_spec_applied__``."""


def _marker_name(value: str) -> str:
    if not MARKER_RE.fullmatch(value):
        raise problem("", "a marker name '__<name>_applied__' (letters, digits, '_')", value)
    return value


MarkerName = Annotated[str, Strict(), AfterValidator(_marker_name)]
"""A unit marker annotation ``__<name>_applied__`` set on an op a rule configured."""


def _op_name(value: str) -> str:
    if not OP_NAME_RE.fullmatch(value):
        raise problem("", "an operation name such as 'linalg.matmul'", value)
    return value


SymbolName = Annotated[str, Strict(), AfterValidator(_symbol)]
"""A name that is emitted as (part of) an MLIR symbol or location: ``[A-Za-z_][A-Za-z0-9_]*``."""

OpName = Annotated[str, Strict(), AfterValidator(_op_name)]
"""A registered-operation spelling, ``dialect.op``."""


def _one_or_more_names(value: object) -> object:
    return (value,) if isinstance(value, str) else value


def _names_not_empty(value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:
        raise problem("", "at least one operation name", [])
    return value


OpNames = Annotated[tuple[OpName, ...], BeforeValidator(_one_or_more_names), AfterValidator(_names_not_empty)]
"""One or more operation names; a single name may be written without a list."""


def in_range(lo: int, hi: int, below: str, above: str) -> object:
    """An AfterValidator: ``lo <= value <= hi``. ``below`` / ``above`` say what was
    expected when the value is too small / too large; the hint names the nearest legal value."""

    def check(value: int) -> int:
        if value < lo:
            raise problem("", below, value, hint=f"the nearest legal value is {lo}" if lo > 0 else "")
        if value > hi:
            raise problem("", above, value, hint=f"the largest legal value is {hi}")
        return value

    return AfterValidator(check)


_I64 = f"at most {I64_MAX} (2**63 - 1, the largest MLIR i64)"

Int64 = Annotated[int, Strict(), in_range(-I64_MAX - 1, I64_MAX, "at least -2**63 (an MLIR i64)", _I64)]
"""A strict integer (no booleans, strings or floats) that fits an MLIR ``i64``."""

Size = Annotated[int, Strict(), in_range(0, I64_MAX, "a non-negative size", f"a size {_I64}")]
"""A tile size, dimension or packed size: a strict integer in ``[0, 2**63)``."""

Rank = Annotated[int, Strict(), in_range(1, MAX_RANK, "a rank of at least 1", f"a rank of at most {MAX_RANK}")]
"""The rank of a tensor or vector: 1 to :data:`MAX_RANK`."""

OperandIndex = Annotated[
    int,
    Strict(),
    in_range(0, MAX_OPERANDS - 1, "a non-negative operand index", f"an operand index below {MAX_OPERANDS}"),
]
"""The index of an op's operand."""

ThreadCount = Annotated[
    int, Strict(), in_range(1, MAX_THREADS, "at least 1 thread", f"at most {MAX_THREADS} threads along one dimension")
]
"""Threads along one workgroup dimension."""

StrictBool = Annotated[bool, Strict()]
"""A boolean that must be spelled ``true`` / ``false`` (not 0, 1 or "yes")."""


def check_length(field: str, values: Sequence[object], most: int = MAX_RANK, what: str = "one per loop") -> None:
    """Raises unless ``values`` has at most ``most`` entries."""
    if len(values) > most:
        raise problem(field, f"at most {most} entries ({what})", Described(f"{len(values)} entries"))


def check_permutation(field: str, perm: Sequence[int], size: int | None = None) -> None:
    """Raises unless ``perm`` is a non-empty permutation of ``range(size)`` (size defaults to len)."""
    check_length(field, perm)
    n = len(perm) if size is None else size
    if n > MAX_RANK:
        raise problem(field, f"a permutation of at most {MAX_RANK} dims", list(perm))
    if not perm and size is None:
        raise problem(field, "a non-empty permutation such as [1, 0]", [])
    if sorted(perm) != list(range(n)):
        raise problem(field, f"a permutation of {list(range(n))}", list(perm))


def check_non_negative(field: str, values: Sequence[int]) -> None:
    for i, v in enumerate(values):
        if v < 0:
            raise problem(f"{field}[{i}]", "a non-negative size", v)


def _sizes_length(value: tuple[int, ...]) -> tuple[int, ...]:
    check_length("", value)
    return value


Sizes = Annotated[tuple[Size, ...], AfterValidator(_sizes_length)]
"""A tile list: one :data:`Size` per loop, at most :data:`MAX_RANK` entries."""

Indices = Annotated[tuple[Int64, ...], AfterValidator(_sizes_length)]
"""A permutation or list of dims: at most :data:`MAX_RANK` strict integers."""


_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("tdsl_validation_depth", default=0)


class StrategyModel(BaseModel):
    """Base of every tdsl value: frozen, no extra fields, errors with field paths.

    Subclasses that own a ``name`` (strategies and strategy sets) set
    ``_names_errors = True`` so that errors below them are reported relative to
    that name, e.g. ``matmul_avx512.tiling[1].mapping``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, use_attribute_docstrings=True)
    _names_errors: ClassVar[bool] = False
    _knob_paths: dict[_knobs.Path, Knob] = PrivateAttr(default_factory=dict)

    def __init__(self, /, **data: Any) -> None:
        # pydantic also calls this __init__ for nested models while validating a parent:
        # only the outermost call turns its ValidationError into a StrategyError.
        depth = _DEPTH.get()
        token = _DEPTH.set(depth + 1)
        try:
            found = knobs_in(data) if _knobs.seen() else {}
            if found:
                for concrete in _tries(data, found):
                    assert isinstance(concrete, dict)  # keyword arguments stay a mapping
                    try:
                        super().__init__(**concrete)
                        break
                    except ValidationError:
                        continue
                else:
                    first = _substitute(data, found, _first(found))
                    assert isinstance(first, dict)
                    super().__init__(**first)
                self._knob_paths = found
            else:
                super().__init__(**data)
        except ValidationError as err:
            if depth:
                raise
            raise strategy_error(type(self), data, err) from None
        finally:
            _DEPTH.reset(token)

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        depth = _DEPTH.get()
        token = _DEPTH.set(depth + 1)
        try:
            found = knobs_in(obj) if _knobs.seen() and isinstance(obj, dict) else {}
            if not found:
                return super().model_validate(obj, *args, **kwargs)
            for concrete in _tries(obj, found):
                try:
                    model = super().model_validate(concrete, *args, **kwargs)
                    break
                except ValidationError:
                    continue
            else:
                model = super().model_validate(_substitute(obj, found, _first(found)), *args, **kwargs)
            model._knob_paths = found
            return model
        except ValidationError as err:
            if depth:
                raise
            raise strategy_error(cls, obj, err) from None
        finally:
            _DEPTH.reset(token)

    def require_concrete(self, what: str) -> None:
        """Raises :class:`StrategyError` if this model holds knobs: ``what`` (render,
        dump, ...) needs one value per field; a :class:`tdsl.sets.space.Space` gives those."""
        if self._knob_paths:
            path, knob = next(iter(self._knob_paths.items()))
            raise StrategyError(
                getattr(self, "name", type(self).__name__),
                [
                    FieldProblem(
                        path_text(path),
                        f"a value ({what} needs a concrete set: tdsl tune or Space(...).candidates() give those)",
                        f"the knob {knob.name!r}",
                    )
                ],
            )

    def knobs(self) -> dict[_knobs.Path, Knob]:
        """{path: knob} of every knob in this model and the models below it (empty for a
        concrete model); paths are field names and indices from this model."""
        return dict(self._knob_paths)

    def with_values(self, assignment: dict[str, object]) -> Any:
        """This model with every knob replaced by ``assignment[knob name]``, validated in
        full as a concrete model (raises :class:`StrategyError` where the values do not fit)."""
        return type(self).model_validate(_substitute(self.model_dump(mode="json"), self._knob_paths, assignment))

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        try:
            data = json.loads(json_data)
        except ValueError as err:  # JSONDecodeError, or an integer too long to convert
            raise StrategyError(cls.__name__, [FieldProblem("", "a JSON document", one_line(str(err)))]) from None
        return cls.model_validate(data, *args, **kwargs)


# --------------------------------------------------------------------------------------
# Knobs in fields: found in the received data, replaced by values for validation.

_STRUCTURAL_TRIES = 16
"""Seeded knob assignments tried after the first values when validating a model with knobs
structurally (a model is accepted when one assignment validates)."""


def knobs_in(data: object, path: _knobs.Path = ()) -> dict[_knobs.Path, Knob]:
    """{path: knob} of the knobs in received ``data``: knob values, and the knobs of models
    built with knobs (their paths prefixed). Raises when two knobs of one name differ."""
    found: dict[_knobs.Path, Knob] = {}
    if isinstance(data, Knob):
        found[path] = data
    elif isinstance(data, StrategyModel):
        found.update({path + p: k for p, k in data._knob_paths.items()})
    elif isinstance(data, dict):
        for key, value in data.items():
            found.update(knobs_in(value, path + (key,)))
    elif isinstance(data, (list, tuple)):
        for i, value in enumerate(data):
            found.update(knobs_in(value, path + (i,)))
    if found and not path:
        _knobs.merge(found)
    return found


def _plain(data: object) -> object:
    """``data`` as mutable plain data: models dumped (JSON mode), tuples as lists."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_plain(v) for v in data]
    return data


def _substitute(data: object, found: dict[_knobs.Path, Knob], assignment: dict[str, object]) -> object:
    """Plain ``data`` with the value ``assignment`` gives each knob's name at its path."""
    out = _plain(data)
    for path, knob in sorted(found.items(), key=lambda item: len(item[0])):
        value = _plain(assignment[knob.name])
        if not path:
            return value
        node: Any = out  # nested dicts and lists, indexed by the path's keys
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return out


def _first(found: dict[_knobs.Path, Knob]) -> dict[str, object]:
    return {name: knob.values()[0] for name, knob in _knobs.merge(found).items()}


def _tries(data: object, found: dict[_knobs.Path, Knob]) -> Iterable[object]:
    """``data`` with the knobs' first values, then with a few seeded assignments."""
    named = list(_knobs.merge(found).values())
    size = _knobs.knob_size(named)
    yield _substitute(data, found, _first(found))
    for index in _knobs.sample_indices(size, _STRUCTURAL_TRIES, seed=0):
        if index:
            yield _substitute(data, found, _knobs.assignment_at(named, index))


# --------------------------------------------------------------------------------------
# Turning pydantic's ValidationError into a StrategyError with field paths.


def _union_members(annotation: object) -> list[object]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _union_members(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members: list[object] = []
        for arg in typing.get_args(annotation):
            members.extend(_union_members(arg))
        return members
    return [annotation]


def _tagged(members: list[object]) -> dict[object, type[BaseModel]]:
    """{kind tag: model} when ``members`` hold several models told apart by ``kind`` (a
    discriminated union: pydantic puts the tag into the error location)."""
    tags: dict[object, type[BaseModel]] = {}
    for member in members:
        if isinstance(member, type) and issubclass(member, BaseModel):
            kind = member.model_fields.get("kind")
            if kind is not None:
                tags[kind.default] = member
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    return tags if len(models) > 1 else {}


def _descend(annotation: object, key: object) -> tuple[object, bool]:
    """Type found below ``annotation`` at loc element ``key``; bool: key was a union tag.

    In a discriminated union the location names the tag first (``function`` for a
    ``FunctionMatch``), so a tag is never taken for a field of the same name."""
    members = _union_members(annotation)
    tags = _tagged(members)
    if isinstance(key, str) and key in tags:
        return tags[key], True
    for member in members:
        if isinstance(member, type) and issubclass(member, BaseModel):
            if isinstance(key, str) and key in member.model_fields:
                return member.model_fields[key].annotation, False
        origin = typing.get_origin(member)
        if origin in (list, tuple, Sequence) and isinstance(key, int):
            args = [a for a in typing.get_args(member) if a is not Ellipsis]
            if args:
                return args[min(key, len(args) - 1)], False
        if origin is dict and isinstance(key, str):
            return typing.get_args(member)[1], False
    return None, False


def _model_of(annotation: object) -> type[BaseModel] | None:
    members = [m for m in _union_members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)]
    return members[0] if len(members) == 1 else None


def _child(node: object, key: object) -> object:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, (list, tuple)) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    if isinstance(node, BaseModel) and isinstance(key, str):
        return getattr(node, key, None)
    return None


def _anchor_name(annotation: object, node: object) -> str | None:
    """The strategy/set name if ``node`` (raw dict or model) is a naming model with a valid
    name; None otherwise (then errors below it keep the path from the outer anchor, so the
    path names the bad or missing ``name`` itself)."""
    model = node if isinstance(node, BaseModel) else None
    cls = type(model) if model is not None else _model_of(annotation)
    if cls is None and isinstance(node, dict) and isinstance(node.get("kind"), str):
        cls = _tagged(_union_members(annotation)).get(node["kind"])
    if cls is None or not getattr(cls, "_names_errors", False):
        return None
    name = getattr(model, "name", None) if model is not None else node.get("name") if isinstance(node, dict) else None
    return name if is_symbol(name) else None


_PATH_PART = re.compile(r"[A-Za-z0-9_.\[\]]+")
_INDEX_PARTS = re.compile(r"(\[\d+\])+")
_KEY_PART = re.compile(r"\[('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")\]")


def key_path(key: str) -> str:
    """The field path part of a dict key (``['a b']``), for ``problem``: a key is always
    shown quoted in brackets, whatever it holds, so ``path_text`` keeps it as it is."""
    return f"[{fmt(key)}]"


def path_text(parts: Iterable[object]) -> str:
    """``("rules", 0, "match", "m")`` -> ``rules[0].match.m`` (the form of field paths and
    locations). A part that is not a field name (an unknown key with spaces, quotes or line
    breaks) is shown quoted in brackets: ``rules[0]['bad key']``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not part and part != 0:
            continue
        elif isinstance(part, str) and (_INDEX_PARTS.fullmatch(part) or _KEY_PART.fullmatch(part)):
            text += part
        elif isinstance(part, str) and _PATH_PART.fullmatch(part):
            text += ("." if text else "") + part
        else:
            text += f"[{fmt(part)}]"
    return text


def _builtin_problem(err: ErrorDetails, site: object) -> tuple[str, str, str]:
    """(expected, received, hint) for one of pydantic's own error types."""
    etype, msg, value = err["type"], err["msg"], err.get("input")
    if etype == "missing":
        return "a value for this required field", "nothing", ""
    if etype == "extra_forbidden":
        model = _model_of(site)
        allowed = sorted(model.model_fields) if model is not None else []
        name = err["loc"][-1]
        close = difflib.get_close_matches(name, allowed, n=1) if isinstance(name, str) else []
        hint = f"did you mean {close[0]!r}?" if close else ""
        expected = "one of the fields " + ", ".join(allowed) if allowed else "no such field"
        return expected, f"unknown field {fmt(name)}", hint
    if etype in ("union_tag_invalid", "union_tag_not_found"):
        tags = ", ".join(repr(t) for t in _tagged(_union_members(site))) or err.get("ctx", {}).get("expected_tags", "")
        if etype == "union_tag_not_found":
            return f"a 'kind' among {tags}", f"no 'kind' in {fmt(value)}", ""
        return f"a 'kind' among {tags}", fmt(err.get("ctx", {}).get("tag", value)), ""
    expected = msg
    for prefix in ("Input should be ", "Value error, "):
        if expected.startswith(prefix):
            expected = expected[len(prefix) :]
    return expected, fmt(value), ""


def strategy_error(cls: type[BaseModel], data: object, err: ValidationError) -> StrategyError:
    """Converts pydantic's error into a StrategyError anchored at the innermost named model.

    Every part of every problem is one line (received values are escaped by :func:`fmt`)."""
    anchor = _anchor_name(cls, data) or cls.__name__
    problems: list[FieldProblem] = []
    first_anchor = anchor
    for e in err.errors(include_url=False):
        annotation: object = cls
        node: object = data
        rel: list[object] = []
        this_anchor = anchor
        in_input = True  # the path so far exists in the input (below a canonicalised
        # spelling, e.g. ``k: 7`` read as ``((7,),)``, the input has no deeper path)
        for key in e["loc"]:
            below, was_tag = _descend(annotation, key)
            if was_tag:
                annotation = below
                continue
            annotation = below
            if not in_input:
                continue
            if isinstance(key, int) and isinstance(node, dict) and isinstance(node.get("one_of"), (list, tuple)):
                rel.append("one_of")
                node = node["one_of"]
            if isinstance(key, int) and not (isinstance(node, (list, tuple)) and 0 <= key < len(node)):
                in_input = False
                continue
            if isinstance(key, str) and not isinstance(node, (dict, BaseModel)):
                in_input = False
                continue
            node = _child(node, key)
            rel.append(key)
            named = _anchor_name(annotation, node)
            if named is not None:
                this_anchor, rel = named, []
        if e["type"] == "tdsl":
            ctx = e["ctx"]
            if ctx.get("strategy"):
                this_anchor, rel = ctx["strategy"], []
            path = path_text([*rel, ctx["field"]]) if ctx["field"] else path_text(rel)
            prob = FieldProblem(path, ctx["expected"], ctx["received"], ctx.get("hint", ""))
        else:
            site = annotation if e["type"] != "extra_forbidden" else _site_of(cls, e["loc"][:-1])
            expected, received, hint = _builtin_problem(e, site)
            prob = FieldProblem(path_text(rel), expected, received, hint)
        prob = FieldProblem(one_line(prob.path), one_line(prob.expected), one_line(prob.received), one_line(prob.hint))
        if problems and this_anchor != first_anchor:
            prob = FieldProblem(f"({this_anchor}) {prob.path}", prob.expected, prob.received, prob.hint)
        elif not problems:
            first_anchor = this_anchor
        problems.append(prob)
    return StrategyError(one_line(first_anchor), problems)


def _site_of(cls: type[BaseModel], loc: Sequence[object]) -> object:
    annotation: object = cls
    for key in loc:
        annotation, _ = _descend(annotation, key)
    return annotation
