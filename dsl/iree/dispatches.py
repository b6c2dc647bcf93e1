"""What a compile did: dispatches, their root ops and pipelines, and which tdsl rules applied.

Reads the configured executables IREE dumps with ``--iree-hal-dump-executable-files-to``
(``configured_module_<dispatch>.mlir``). Proof of application is the marker each
rendered script attaches: ``tdsl.layout = "<strategy>"`` (graph-level layout, on the
rewritten op) and ``tdsl.applied = "<strategy>"`` (compilation_info or codegen strategy,
on the configured root op).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import bindings as mlir
from ..render import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, RULE_MARKER

_NOT_ROOT = {"linalg.fill", "linalg.yield", "linalg.index"}

# The order in which a report shows a lowering config's entries (the tiling levels from
# outermost to innermost); other entries follow alphabetically.
FIELD_ORDER = (
    "distribution",
    "cache_parallel",
    "cache_reduction",
    "vector_common_parallel",
    "vector_reduction",
    "vector_inner_parallel",
    "workgroup",
    "reduction",
    "partial_reduction",
    "subgroup",
    "subgroup_basis",
    "thread",
    "lane_basis",
    "mma_kind",
    "promote_operands",
    "tile_sizes",
)


@dataclass(frozen=True)
class OpConfig:
    """The lowering config of one op of a configured dispatch, as structured fields."""

    op: str
    dialect: str
    fields: dict[str, mlir.ConfigValue]
    text: str

    def ordered(self) -> list[tuple[str, mlir.ConfigValue]]:
        """The entries in :data:`FIELD_ORDER`, then the others by name."""
        rank = {name: i for i, name in enumerate(FIELD_ORDER)}
        return sorted(self.fields.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "dialect": self.dialect, "fields": _jsonable(dict(self.ordered())), "text": self.text}

    def __str__(self) -> str:
        return f"{self.op}: {self.text}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def spelled(value: mlir.ConfigValue) -> str:
    """A config value as MLIR spells it: ``[64, 64, 0]``, ``[[2, 2], [0, 1]]``."""
    if isinstance(value, tuple):
        return "[" + ", ".join(spelled(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {spelled(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def short_pipeline(pipeline: str | None) -> str:
    """``#iree_cpu.pipeline<Mmt4dTilingExpert>`` -> ``Mmt4dTilingExpert``."""
    if pipeline is None:
        return "-"
    if pipeline.startswith("#") and pipeline.endswith(">") and "<" in pipeline:
        return pipeline[pipeline.index("<") + 1 : -1]
    return pipeline


@dataclass(frozen=True)
class DispatchSummary:
    """One dispatch function after configuration."""

    name: str
    pipeline: str | None
    codegen_spec: str | None
    compute_ops: tuple[str, ...]
    layout_strategies: tuple[str, ...]
    applied_strategies: tuple[str, ...]
    lowering_configs: tuple[OpConfig, ...] = field(default=())
    rules: tuple[int, ...] = field(default=())

    def line(self) -> str:
        """One line for a dispatch-summary golden: name, compute ops, pipeline, strategies."""
        applied = ",".join(self.layout_strategies + self.applied_strategies) or "-"
        return f"{self.name}: {' + '.join(self.compute_ops) or '-'} | {self.pipeline or '-'} | {applied}"


def _is_compute(name: str) -> bool:
    return (
        (name.startswith("linalg.") or name.startswith("iree_linalg_ext."))
        and name not in _NOT_ROOT
        and not name.endswith(".yield")
    )


def summarize_configured(text: str) -> list[DispatchSummary]:
    """Dispatch summaries of one configured executable module."""
    summaries = []
    ops = mlir.walk(text)
    functions = [op for op in ops if op.name == "func.func" and "translation_info" in op.attributes]
    for func in functions:
        inside = [op for op in ops if op.function == func.function and op.name != "func.func"]
        translation = func.values.get("translation_info")
        info = translation if isinstance(translation, mlir.TranslationInfo) else None
        summaries.append(
            DispatchSummary(
                name=func.function or "?",
                pipeline=info.pipeline if info else None,
                codegen_spec=info.codegen_spec if info else None,
                compute_ops=tuple(op.name for op in inside if _is_compute(op.name)),
                layout_strategies=_strings(inside, LAYOUT_MARKER),
                applied_strategies=_strings(inside, MARKER),
                rules=tuple(sorted({index for op in inside for index in _ints(op, RULE_MARKER, LAYOUT_RULE_MARKER)})),
                lowering_configs=tuple(_config(op) for op in inside if "lowering_config" in op.attributes),
            )
        )
    return summaries


def _config(op: mlir.OpSummary) -> OpConfig:
    value = op.values.get("lowering_config")
    text = op.attributes["lowering_config"]
    if isinstance(value, mlir.LoweringConfig):
        return OpConfig(op.name, value.dialect, value.fields, text)
    return OpConfig(op.name, text.split(".")[0].lstrip("#"), {}, text)


def _strings(ops: list[mlir.OpSummary], key: str) -> tuple[str, ...]:
    """The string values of attribute ``key`` on ``ops``, in order."""
    return tuple(v for v in (op.values.get(key) for op in ops) if isinstance(v, str))


def _ints(op: mlir.OpSummary, *keys: str) -> list[int]:
    """The integer values of the attributes ``keys`` that ``op`` carries."""
    return [v for v in (op.values.get(key) for key in keys) if isinstance(v, int) and not isinstance(v, bool)]


def summarize_dump(directory: Path | str) -> list[DispatchSummary]:
    """Dispatch summaries of every ``configured_module_*.mlir`` in ``directory``, by name."""
    summaries: list[DispatchSummary] = []
    for path in sorted(Path(directory).glob("configured_module_*.mlir")):
        summaries.extend(summarize_configured(path.read_text()))
    return sorted(summaries, key=lambda s: _natural(s.name))


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
