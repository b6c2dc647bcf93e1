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
import re
import types
import typing
from typing import Annotated, Any, ClassVar, Iterable, Sequence, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from ..errors import FieldProblem, StrategyError

SYMBOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
OP_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$")


class Described(str):
    """A received value that is already a description (printed without quotes)."""


def fmt(value: Any) -> str:
    """Formats a received value compactly for an error message."""
    if isinstance(value, Described):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, BaseModel):
        kind = getattr(value, "kind", type(value).__name__)
        return f"<{kind}>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in value.items()) + "}"
    return repr(value)


def problem(
    field: str, expected: str, received: Any, hint: str = "", strategy: str = ""
) -> PydanticCustomError:
    """Builds the error a validator raises: ``raise problem("tile_sizes[1]", "...", value)``.

    ``field`` is relative to the model whose validator raises (empty for the field itself);
    ``strategy`` re-anchors the message at a named strategy below that model.
    """
    ctx = {
        "field": field,
        "expected": expected,
        "received": fmt(received),
        "hint": hint,
        "strategy": strategy,
    }
    return PydanticCustomError("tdsl", "{field}: expected {expected}, received {received}", ctx)


def _symbol(value: str) -> str:
    if not SYMBOL_RE.match(value):
        raise problem(
            "",
            "an MLIR symbol name: a letter or '_' then letters, digits or '_'",
            value,
        )
    return value


def _op_name(value: str) -> str:
    if not OP_NAME_RE.match(value):
        raise problem("", "an operation name such as 'linalg.matmul'", value)
    return value


SymbolName = Annotated[str, AfterValidator(_symbol)]
"""A name that is emitted as (part of) an MLIR symbol or location: ``[A-Za-z_][A-Za-z0-9_]*``."""

OpName = Annotated[str, AfterValidator(_op_name)]
"""A registered-operation spelling, ``dialect.op``."""


def check_permutation(field: str, perm: Sequence[int], size: int | None = None) -> None:
    """Raises unless ``perm`` is a permutation of ``range(size)`` (size defaults to len)."""
    n = len(perm) if size is None else size
    if sorted(perm) != list(range(n)):
        raise problem(field, f"a permutation of {list(range(n))}", list(perm))


def check_non_negative(field: str, values: Sequence[int]) -> None:
    for i, v in enumerate(values):
        if v < 0:
            raise problem(f"{field}[{i}]", "a non-negative size", v)


_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("tdsl_validation_depth", default=0)


class StrategyModel(BaseModel):
    """Base of every tdsl value: frozen, no extra fields, errors with field paths.

    Subclasses that own a ``name`` (strategies and strategy sets) set
    ``_names_errors = True`` so that errors below them are reported relative to
    that name, e.g. ``matmul_avx512.tiling[1].mapping``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)
    _names_errors: ClassVar[bool] = False

    def __init__(self, /, **data: Any) -> None:
        # pydantic also calls this __init__ for nested models while validating a parent:
        # only the outermost call turns its ValidationError into a StrategyError.
        depth = _DEPTH.get()
        token = _DEPTH.set(depth + 1)
        try:
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
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as err:
            if depth:
                raise
            raise strategy_error(cls, obj, err) from None
        finally:
            _DEPTH.reset(token)

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        import json

        return cls.model_validate(json.loads(json_data), *args, **kwargs)


# --------------------------------------------------------------------------------------
# Turning pydantic's ValidationError into a StrategyError with field paths.


def _union_members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _union_members(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members: list[Any] = []
        for arg in typing.get_args(annotation):
            members.extend(_union_members(arg))
        return members
    return [annotation]


def _descend(annotation: Any, key: Any) -> tuple[Any, bool]:
    """Type found below ``annotation`` at loc element ``key``; bool: key was a union tag."""
    for member in _union_members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            if isinstance(key, str) and key in member.model_fields:
                return member.model_fields[key].annotation, False
            kind = member.model_fields.get("kind")
            if kind is not None and kind.default == key:
                return member, True
        origin = typing.get_origin(member)
        if origin in (list, tuple, Sequence) and isinstance(key, int):
            args = [a for a in typing.get_args(member) if a is not Ellipsis]
            if args:
                return args[min(key, len(args) - 1)], False
        if origin is dict and isinstance(key, str):
            return typing.get_args(member)[1], False
    return None, False


def _model_of(annotation: Any) -> type[BaseModel] | None:
    members = [
        m for m in _union_members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)
    ]
    return members[0] if len(members) == 1 else None


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, (list, tuple)) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    if isinstance(node, BaseModel) and isinstance(key, str):
        return getattr(node, key, None)
    return None


def _anchor_name(annotation: Any, node: Any) -> str | None:
    """The strategy/set name if ``node`` (raw dict or model) is a naming model."""
    model = node if isinstance(node, BaseModel) else None
    cls = type(model) if model is not None else _model_of(annotation)
    if cls is None and isinstance(node, dict):
        for member in _union_members(annotation):
            if isinstance(member, type) and issubclass(member, BaseModel):
                kind = member.model_fields.get("kind")
                if kind is not None and kind.default == node.get("kind"):
                    cls = member
    if cls is None or not getattr(cls, "_names_errors", False):
        return None
    name = getattr(model, "name", None) if model is not None else node.get("name") if isinstance(node, dict) else None
    return name if isinstance(name, str) and name else f"<unnamed {cls.__name__}>"


def path_text(parts: Iterable[Any]) -> str:
    """``("rules", 0, "match", "m")`` -> ``rules[0].match.m`` (the form of field paths and locations)."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part and str(part).startswith("["):
            text += str(part)
        elif part:
            text += ("." if text else "") + str(part)
    return text


def _builtin_problem(err: Any, site: Any) -> tuple[str, str, str]:
    """(expected, received, hint) for one of pydantic's own error types."""
    etype, msg, value = err["type"], err["msg"], err.get("input")
    if etype == "missing":
        return "a value for this required field", "nothing", ""
    if etype == "extra_forbidden":
        model = _model_of(site)
        allowed = sorted(model.model_fields) if model is not None else []
        name = str(err["loc"][-1])
        close = difflib.get_close_matches(name, allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else ""
        expected = "one of the fields " + ", ".join(allowed) if allowed else "no such field"
        return expected, f"unknown field {name!r}", hint
    if etype in ("union_tag_invalid", "union_tag_not_found"):
        tags = err.get("ctx", {}).get("expected_tags", "")
        return f"a 'kind' among {tags}", fmt(err.get("ctx", {}).get("tag", value)), ""
    expected = msg
    for prefix in ("Input should be ", "Value error, "):
        if expected.startswith(prefix):
            expected = expected[len(prefix):]
    return expected, fmt(value), ""


def strategy_error(cls: type[BaseModel], data: Any, err: ValidationError) -> StrategyError:
    """Converts pydantic's error into a StrategyError anchored at the innermost named model."""
    anchor = cls.__name__ if not getattr(cls, "_names_errors", False) else None
    anchor = _anchor_name(cls, data) or anchor
    problems: list[FieldProblem] = []
    first_anchor = anchor
    for e in err.errors(include_url=False):
        annotation: Any = cls
        node: Any = data
        rel: list[Any] = []
        this_anchor = anchor
        for key in e["loc"]:
            below, was_tag = _descend(annotation, key)
            if was_tag:
                annotation = below
                continue
            node = _child(node, key)
            annotation = below
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
        if problems and this_anchor != first_anchor:
            prob = FieldProblem(f"({this_anchor}) {prob.path}", prob.expected, prob.received, prob.hint)
        elif not problems:
            first_anchor = this_anchor
        problems.append(prob)
    return StrategyError(first_anchor, problems)


def _site_of(cls: type[BaseModel], loc: Sequence[Any]) -> Any:
    annotation: Any = cls
    for key in loc:
        annotation, _ = _descend(annotation, key)
    return annotation
