"""What a compile did: dispatches, their root ops and pipelines, how often each is launched,
and which tdsl rules applied.

Reads the configured executables IREE dumps with ``--iree-hal-dump-executable-files-to``
(``configured_module_<dispatch>.mlir``). Proof of application is the marker each
rendered script attaches: ``tdsl.layout = "<strategy>"`` (graph-level layout, on the
rewritten op) and ``tdsl.applied = "<strategy>"`` (compilation_info or codegen strategy,
on the configured root op).

Launches are the one count of dispatch launches tdsl has (the compile report, the
dispatch goldens, ``tdsl ops`` and ``examples/models/measure.py`` all read it): the same
``iree-compile`` run writes IREE's stream statistics as CSV (:func:`statistics_flags`;
``--iree-scheduling-dump-statistics-format=json`` has only the totals), one row per
``stream.cmd.dispatch`` naming its ``@executable::@export``, under a header naming the
function it is in. The export is the dispatch function the configured dump holds (IREE has
already merged identical executables then: a second launch of one names the first's
export), so counts map onto :class:`DispatchSummary` names exactly. Stream builtins (an
i64 splat, ``__builtin_splat_i64``) are dispatches too. A dispatch in a ``util.initializer``
(a weight packed when the module loads) counts at load, not per call. Counts are static: a
dispatch in a loop counts once; "per call" means one call of each public function, summed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping

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

    def to_json(self) -> dict[str, object]:
        return {"op": self.op, "dialect": self.dialect, "fields": _jsonable(dict(self.ordered())), "text": self.text}

    def __str__(self) -> str:
        return f"{self.op}: {self.text}"


def _jsonable(value: object) -> object:
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
    launches: int | None = None
    """Launches per call (see the module docstring); None when the dump has no statistics."""
    launches_at_load: int = 0
    """Launches in the module's initializers (once, when the module loads)."""
    peeled: bool = False
    """IREE peels its loops that the vector tile does not divide (``enable_loop_peeling`` in
    the translation_info; see :attr:`tdsl.CpuTarget.peel_vector_loops`)."""

    def launch_text(self) -> str:
        """``x3``, ``x0 (+1 at load)``; empty when the launches are unknown."""
        if self.launches is None:
            return ""
        return f"x{self.launches}" + (f" (+{self.launches_at_load} at load)" if self.launches_at_load else "")

    def line(self) -> str:
        """One line for a dispatch-summary golden: name, launches per call, compute ops,
        pipeline, strategies."""
        applied = ",".join(self.layout_strategies + self.applied_strategies) or "-"
        launches = f" {self.launch_text()}" if self.launches is not None else ""
        return f"{self.name}{launches}: {' + '.join(self.compute_ops) or '-'} | {self.pipeline or '-'} | {applied}"


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
                peeled=bool(info and info.configuration and "enable_loop_peeling" in info.configuration),
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
    """Dispatch summaries of every ``configured_module_*.mlir`` in ``directory``, by name,
    with their launches when the run also wrote :data:`STATISTICS_FILE` there."""
    summaries: list[DispatchSummary] = []
    for path in sorted(Path(directory).glob("configured_module_*.mlir")):
        summaries.extend(summarize_configured(path.read_text()))
    counts = launches_in(directory)
    if counts is not None:
        summaries = [
            replace(s, launches=counts.per_call.get(s.name, 0), launches_at_load=counts.at_load.get(s.name, 0))
            for s in summaries
        ]
    return sorted(summaries, key=lambda s: _natural(s.name))


STATISTICS_FILE = "tdsl-stream-statistics.csv"
"""The name of IREE's stream statistics in an executable dump directory tdsl filled."""


def statistics_flags(path: Path | str) -> list[str]:
    """The ``iree-compile`` flags that write IREE's stream statistics (CSV) to ``path``, at
    no extra cost (a pass over the stream IR). Requires ``path``'s directory to exist (IREE
    does not create it; it prints the table to stderr instead)."""
    return ["--iree-scheduling-dump-statistics-format=csv", f"--iree-scheduling-dump-statistics-file={path}"]


@dataclass(frozen=True)
class Launches:
    """Launches by dispatch function (executable export): ``per_call`` in the program's
    functions, ``at_load`` in its initializers."""

    per_call: Mapping[str, int]
    at_load: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Launches per call (one call of each public function)."""
        return sum(self.per_call.values())

    @property
    def total_at_load(self) -> int:
        return sum(self.at_load.values())

    def unmapped(self, names: Iterable[str]) -> dict[str, int]:
        """{export: launches} of the exports that are not among ``names`` (the dispatch
        functions of the run's dump); empty when every launch maps onto a dispatch."""
        known = set(names)
        found: dict[str, int] = {}
        for counts in (self.per_call, self.at_load):
            for name, n in counts.items():
                if name not in known:
                    found[name] = found.get(name, 0) + n
        return found


# A table header (`; builtin.module > util.func @f > stream.cmd.execute`) and a dispatch row
# (`0,"dispatch","@exe::@export",,1,"64;32",0,3`; IREE does not escape the quotes of a quoted
# symbol such as @"a-b", so the row is matched from both ends rather than read as CSV).
_TABLE = re.compile(r"^; (?P<where>.*> stream\.cmd\.execute)$")
_ROW = re.compile(r'^\d+,"dispatch","(?P<symbol>.*)",,\d*,"[^"]*",\d+,\d+$')
_SYMBOL = re.compile(r'@(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^:"]+))$')


def read_launches(statistics_csv: str) -> Launches:
    """Launches per dispatch function from the stream statistics :func:`statistics_flags`
    writes: a dispatch under a ``util.initializer`` counts at load, any other per call."""
    per_call: dict[str, int] = {}
    at_load: dict[str, int] = {}
    counts = per_call
    for line in statistics_csv.splitlines():
        table = _TABLE.match(line)
        if table is not None:
            counts = at_load if "util.initializer" in table.group("where") else per_call
            continue
        row = _ROW.match(line)
        if row is None:
            continue
        name = _export_name(row.group("symbol"))
        counts[name] = counts.get(name, 0) + 1
    return Launches(per_call, at_load)


def _export_name(symbol: str) -> str:
    """``@exe::@export`` -> ``export``; ``@"e-x"::@"a\\22b"`` -> ``a"b`` (MLIR's quoting)."""
    found = _SYMBOL.search(symbol)
    if found is None:
        return symbol
    if found.group("bare") is not None:
        return found.group("bare")
    return re.sub(
        r"\\([0-9A-Fa-f]{2}|\\)",
        lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1), 16)),
        found.group("quoted"),
    )


def launches_in(directory: Path | str) -> Launches | None:
    """The launches of the run whose statistics are ``directory``/:data:`STATISTICS_FILE`;
    None when there are none."""
    path = Path(directory) / STATISTICS_FILE
    return read_launches(path.read_text()) if path.is_file() else None


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
