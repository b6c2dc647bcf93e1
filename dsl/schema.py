"""The JSON Schema of the strategy file format (``tdsl schema``), for editors and checkers.

pydantic's ``StrategySet.model_json_schema()`` describes the canonical form validators
produce, not what a file may say. This module generates it with a schema generator that
knows tdsl's validators:

* before-validators widen a field to every spelling the loader accepts: a dimension group
  ``m: 256``, ``m: [56, 56]``, ``m: {one_of: [128, 256]}``, ``m: any``; ``names:
  linalg.matmul`` for a one-element list. An unknown before-validator is an error here
  (a test runs this), so the schema cannot silently fall behind the loader;
* after-validators that are plain value checks narrow it: integer ranges (``Size``,
  ``Rank``, ...), symbol and op-name patterns, at most 16 entries per tile list;
* a model in a discriminated union requires its ``kind`` (the loader needs it to pick the
  model; a default ``kind`` only helps Python constructors).

Checks that need other fields or the target (permutations, loop counts, MMA intrinsics,
LDS) are left to the loader; the schema accepts every file the loader accepts. One gap
JSON Schema cannot close: it counts ``1.0`` as an integer, which the loader refuses.
"""

from __future__ import annotations

import inspect
from typing import Callable

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .errors import TdslError
from .model.base import MARKER_RE, MAX_RANK, OP_NAME_RE, SYMBOL_RE
from .model.matchers import MAX_SEQUENCES
from .sets.strategy_set import StrategySet

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _names_widened(inner: JsonSchemaValue) -> JsonSchemaValue:
    """``names: linalg.matmul`` is ``names: [linalg.matmul]``."""
    item = inner.get("items", {"type": "string"})
    return {"anyOf": [inner, item]}


def _dims_widened(inner: JsonSchemaValue) -> JsonSchemaValue:
    """A dimension group: null or ``"any"`` (any size), one size, a list of sizes, a list of
    alternatives, or ``{one_of: [...]}`` of sizes or of lists of sizes; a size may be
    ``"?"`` (dynamic, the same as -1)."""
    nested = next((m for m in inner.get("anyOf", [inner]) if m.get("type") == "array"), None)
    if nested is None:
        raise TdslError(f"schema: a dimension group whose canonical form is no array: {inner}")
    listed = nested.get("items", {})
    size = {"anyOf": [dict(listed.get("items", {"type": "integer"})), {"const": "?"}]}
    sizes = {**listed, "items": size, "maxItems": MAX_RANK}
    alternatives = {"type": "array", "items": sizes, "minItems": 1, "maxItems": MAX_SEQUENCES}
    one_size_each = {"type": "array", "items": size, "minItems": 1, "maxItems": MAX_SEQUENCES}
    return {
        "anyOf": [
            {"type": "null"},
            {"const": "any"},
            size,
            sizes,
            alternatives,
            {
                "type": "object",
                "properties": {"one_of": {"anyOf": [one_size_each, alternatives]}},
                "required": ["one_of"],
                "additionalProperties": False,
            },
        ],
        "description": "any size (null or 'any'), one size (256), one size per dimension of the group "
        "([56, 56]), or alternatives ([[128], [256]] or {one_of: [128, 256]}); '?' or -1 is a dynamic size",
    }


Validator = Callable[..., object]
"""A pydantic validator function (a plain value check, for the after-validators)."""

# Before-validators by qualified name: what the field accepts, from its canonical schema.
_BEFORE: dict[str, Callable[[JsonSchemaValue], JsonSchemaValue]] = {
    "tdsl.model.matchers.dims._canonical_dims": _dims_widened,
    "tdsl.model.base._one_or_more_names": _names_widened,
}


def _qualified(function: object) -> str:
    function = getattr(function, "__func__", function)
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"


def _in_range(function: Validator, inner: JsonSchemaValue) -> JsonSchemaValue:
    bounds = inspect.getclosurevars(function).nonlocals
    if inner.get("type") == "integer" and "lo" in bounds and "hi" in bounds:
        return {**inner, "minimum": bounds["lo"], "maximum": bounds["hi"]}
    return inner


def _pattern(regex: str) -> Callable[[Validator, JsonSchemaValue], JsonSchemaValue]:
    def narrow(function: Validator, inner: JsonSchemaValue) -> JsonSchemaValue:
        return {**inner, "pattern": f"^(?:{regex})$"} if inner.get("type") == "string" else inner

    return narrow


def _max_items(function: Validator, inner: JsonSchemaValue) -> JsonSchemaValue:
    return {**inner, "maxItems": MAX_RANK} if inner.get("type") == "array" else inner


# After-validators that are plain value checks, by qualified name.
_AFTER: dict[str, Callable[[Validator, JsonSchemaValue], JsonSchemaValue]] = {
    "tdsl.model.base.in_range.<locals>.check": _in_range,
    "tdsl.model.base._symbol": _pattern(SYMBOL_RE.pattern),
    "tdsl.model.base._op_name": _pattern(OP_NAME_RE.pattern),
    "tdsl.model.base._marker_name": _pattern(MARKER_RE.pattern),
    "tdsl.model.base._sizes_length": _max_items,
}


class _Generator(GenerateJsonSchema):
    """pydantic's generator, told what tdsl's validators accept (module docstring)."""

    def function_before_schema(self, schema: core_schema.BeforeValidatorFunctionSchema) -> JsonSchemaValue:
        name = _qualified(schema["function"]["function"])
        widen = _BEFORE.get(name)
        if widen is None:
            raise TdslError(
                f"schema: the before-validator {name} accepts spellings tdsl.schema does not know; "
                "add what it accepts to tdsl.schema._BEFORE"
            )
        return widen(self.generate_inner(schema["schema"]))

    def function_after_schema(self, schema: core_schema.AfterValidatorFunctionSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        function = schema["function"]["function"]
        narrow = _AFTER.get(_qualified(function))
        return narrow(function, inner) if narrow is not None else inner

    def function_wrap_schema(self, schema: core_schema.WrapValidatorFunctionSchema) -> JsonSchemaValue:
        raise TdslError(
            f"schema: a wrap validator ({_qualified(schema['function']['function'])}) tdsl.schema cannot describe"
        )


def _walk(node: object, visit: Callable[[JsonSchemaValue], None]) -> None:
    if isinstance(node, dict):
        visit(node)
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


def _require_tags(schema: JsonSchemaValue) -> None:
    """Every model in a discriminated union requires its tag."""
    definitions = schema.get("$defs", {})

    def visit(node: JsonSchemaValue) -> None:
        discriminator = node.get("discriminator")
        if not isinstance(discriminator, dict):
            return
        tag = discriminator.get("propertyName")
        for ref in discriminator.get("mapping", {}).values():
            model = definitions.get(str(ref).rsplit("/", 1)[-1])
            if model is not None and tag and tag not in model.setdefault("required", []):
                model["required"].insert(0, tag)

    _walk(schema, visit)


def strategy_file_schema() -> JsonSchemaValue:
    """The JSON Schema (draft 2020-12) of a strategy file (.yaml / .json): see the module
    docstring for what it checks."""
    schema: JsonSchemaValue = StrategySet.model_json_schema(mode="validation", schema_generator=_Generator)
    _require_tags(schema)
    return {
        "$schema": DIALECT,
        "title": "tdsl strategy file",
        **{k: v for k, v in schema.items() if k != "title"},
    }
