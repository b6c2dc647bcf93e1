"""Every field a strategy file can hold says what it emits: a description that the JSON
schema, help() and editors show (field docstrings, pydantic's use_attribute_docstrings)."""

from __future__ import annotations

import typing
from typing import Any

import tdsl
from pydantic import BaseModel
from tdsl.model.registry import LEAF_MATCHER_KINDS, STRATEGY_KINDS
from tdsl.targets import TARGET_KINDS


def _models(annotation: Any, seen: set[type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return
        seen.add(annotation)
        for field in annotation.model_fields.values():
            _models(field.annotation, seen)
        return
    for arg in typing.get_args(annotation):
        _models(arg, seen)


def test_every_field_of_every_model_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()
    for root in (tdsl.StrategySet, *STRATEGY_KINDS, *LEAF_MATCHER_KINDS, *TARGET_KINDS, tdsl.AllOf):
        _models(root, seen)
    missing = sorted(
        f"{model.__name__}.{name}"
        for model in seen
        for name, field in model.model_fields.items()
        if not (field.description or "").strip()
    )
    assert len(seen) > 15 and not missing, missing


def test_descriptions_reach_the_schema() -> None:
    from tdsl.schema import strategy_file_schema

    text = str(strategy_file_schema())
    assert "matmul_inner_dims_order" in text and "Order of the inner tiles" in text
