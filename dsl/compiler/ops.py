"""The op listing of a program: every dispatch, how often it is launched per call, its root
op as codegen sees it and as the graph level sees it, its loop roles and the tdsl matcher
that selects exactly it.

``list_dispatches(payload, target)`` compiles the payload twice with IREE's default
pipeline for ``target`` (no strategies): to ``abi`` (the graph level, where data-layout
rules act) and to ``executable-configurations`` (the configured dispatches codegen works
on; the same run writes IREE's stream statistics, which give the launches per call, as for
the compile report: :func:`tdsl.compiler.dispatches.read_launches`). Ops are read with the
bindings (:func:`tdsl.bindings.linalg_ops`); a dispatch's root op is linked to its
graph-level op by their common source location.

Requires the pinned ``iree-base-compiler``; emits nothing.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .. import bindings
from ..errors import StrategyError
from ..model.all_of import AllOf
from ..model.base import StrategyModel
from ..model.element_types import ELEMENT_BITS
from ..model.kinds import MatcherKind, Phase
from ..model.matchers import (
    ContractionMatch,
    ConvolutionMatch,
    FunctionMatch,
    OperandMatch,
    OpNameMatch,
    contraction_with_layout,
)
from ..render import LAYOUT_MARKER, MARKER, render
from ..sets.strategy_set import StrategySet
from ..targets import Target, resolve
from ..targets.cpu import PEEL_FLAG, PREPROCESSING_PIPELINE
from .dispatches import STATISTICS_FILE, Launches, read_launches, statistics_flags
from .iree_compile import CompileFailed, run_iree_compile
from .knob_fallback import build_with_fallback
from .options import DEFAULT_OPTIONS, CompileOptions
from .peeling import PEELING_KNOB, odd_loops, peeled_ops
from .phases import compile_to_phase

CONTRACTION_ROLES = ("batch", "m", "n", "k")
CONVOLUTION_ROLES = ("batch", "output_image", "output_channel", "filter_loop", "input_channel", "depth")
_ROLE_LETTER = {
    "batch": "b",
    "m": "m",
    "n": "n",
    "k": "k",
    "output_image": "o",
    "output_channel": "f",
    "filter_loop": "w",
    "input_channel": "c",
    "depth": "d",
}


@dataclass(frozen=True)
class OpView:
    """One op as a phase sees it: name, shapes and element types of its operands (ins then
    outs), loop sizes with the role of each loop, strides / dilations of a convolution, and
    the scalar zero points of a contraction with zero points (``linalg.quantized_matmul``)."""

    name: str
    kind: str
    operands: tuple[bindings.TensorType, ...]
    loop_sizes: tuple[int, ...]
    roles: dict[str, tuple[int, ...]]
    strides: tuple[int, ...] = ()
    dilations: tuple[int, ...] = ()
    zero_points: tuple[str, ...] = ()
    maps: tuple[str, ...] = ()
    body: tuple[str, ...] = ()
    """The ops one point of its loops computes (:attr:`tdsl.bindings.LinalgOp.body`)."""

    @classmethod
    def of(cls, op: bindings.LinalgOp) -> "OpView":
        return cls(
            op.name,
            op.kind,
            op.operands,
            op.loop_sizes,
            op.roles,
            op.strides,
            op.dilations,
            op.zero_points,
            op.maps,
            op.body,
        )

    def sizes(self, role: str) -> list[int]:
        return [self.loop_sizes[d] for d in self.roles.get(role, ())]

    def loop_roles(self) -> str:
        """One letter per loop: b m n k for contractions; b o f w c d for convolutions
        (batch, output image, output channel, filter window, input channel, depth); '.'
        for other loops."""
        letters = ["."] * len(self.loop_sizes)
        for role, dims in self.roles.items():
            for d in dims:
                letters[d] = _ROLE_LETTER[role]
        return "".join(letters)

    def shapes(self) -> str:
        """``128x256xf32, 256x512xf32 -> 128x512xf32``; zero points after the lhs and rhs
        (``16x64xi8, 64x32xi8, i32, i32 -> 16x32xi32``), as the op's ``ins`` list them."""
        spelled = ["x".join(str(d) for d in t.shape) + ("x" if t.shape else "") + t.element for t in self.operands]
        if not spelled:
            return "-"
        return ", ".join([*spelled[:-1], *self.zero_points]) + " -> " + spelled[-1]

    def to_json(self) -> dict[str, object]:
        return {
            "op": self.name,
            "kind": self.kind,
            "operands": [{"shape": list(t.shape), "element_type": t.element} for t in self.operands],
            "loop_sizes": list(self.loop_sizes),
            "loop_roles": self.loop_roles(),
            "roles": {role: self.sizes(role) for role in self.roles},
            "strides": list(self.strides),
            "dilations": list(self.dilations),
            "zero_points": list(self.zero_points),
        }


@dataclass(frozen=True)
class Dispatch:
    """One dispatch of the program: its executable (the dispatch function), launches per call,
    the root op at codegen and at the graph level, IREE's pipeline and configuration, and a
    matcher for each level that selects exactly this op."""

    name: str
    launches: int
    root: OpView | None
    graph_op: OpView | None
    pipeline: str | None
    lowering_config: str | None
    codegen_matcher: MatcherKind | None
    graph_matcher: MatcherKind | None
    covered_by: tuple[str, ...] = field(default=())
    launches_at_load: int = 0
    """Launches in the module's initializers (once, when it loads)."""
    bound_bytes: int | None = None
    """Bytes of the buffers the dispatch binds (its operands and results as IREE binds
    them), each counted once: a floor on its memory traffic per launch. None where a
    binding's size is not static."""
    odd_loops: tuple[int, ...] = ()
    """The loops of IREE's configured root (the op with a ``distribution`` level, which
    need not be :attr:`root`: a softmax's sum rather than its max) that its vector tile does
    not divide (:func:`tdsl.compiler.peeling.odd_loops`): where ``peel_vector_loops``
    changes the code."""

    def to_json(self) -> dict[str, object]:
        return {
            "dispatch": self.name,
            "launches": self.launches,
            "launches_at_load": self.launches_at_load,
            "root": self.root.to_json() if self.root else None,
            "graph_op": self.graph_op.to_json() if self.graph_op else None,
            "pipeline": self.pipeline,
            "lowering_config": self.lowering_config,
            "codegen_matcher": _dump(self.codegen_matcher),
            "graph_matcher": _dump(self.graph_matcher),
            "covered_by": list(self.covered_by),
            "bound_bytes": self.bound_bytes,
        }


@dataclass(frozen=True)
class ProgramOps:
    """Every dispatch of a program for one target."""

    payload: Path
    target: str
    dispatches: tuple[Dispatch, ...]
    notes: tuple[str, ...] = ()
    """What the listing could not show, or showed differently (the ready set's coverage build)."""

    @property
    def launches(self) -> int:
        return sum(d.launches for d in self.dispatches)

    @property
    def launches_at_load(self) -> int:
        return sum(d.launches_at_load for d in self.dispatches)

    def to_json(self, shares: Mapping[str, float] | None = None) -> dict[str, object]:
        """The listing as JSON; with ``shares`` (a profile's share of the time per dispatch,
        :func:`tdsl.measure.dispatch_profile.time_shares`) each dispatch has its ``time_share``."""
        return {
            "payload": str(self.payload),
            "target": self.target,
            "executables": len(self.dispatches),
            "launches": self.launches,
            "launches_at_load": self.launches_at_load,
            "dispatches": [
                d.to_json() | ({"time_share": shares.get(d.name)} if shares is not None else {})
                for d in self.dispatches
            ],
            "notes": list(self.notes),
        }

    def text(self, shares: Mapping[str, float] | None = None) -> str:
        """The listing as ``tdsl ops`` prints it; with ``shares``, each dispatch's share of its
        function's time, largest first."""
        at_load = f", {self.launches_at_load} at load" if self.launches_at_load else ""
        lines = [
            f"{self.payload} for {self.target}: {len(self.dispatches)} executables, {self.launches} launches per call{at_load}"
        ]
        ordered = (
            sorted(self.dispatches, key=lambda d: -shares.get(d.name, 0.0)) if shares is not None else self.dispatches
        )
        for d in ordered:
            root = d.root
            at_load = f" (+{d.launches_at_load} at load)" if d.launches_at_load else ""
            share = f"  {shares[d.name]:.1%} of the time" if shares is not None and d.name in shares else ""
            lines.append(f"  {d.name}  x{d.launches}{at_load}{share}  {d.pipeline or '-'}")
            if root is not None:
                lines.append(f"    codegen: {root.name} [{root.loop_roles()}] {root.shapes()}")
            if d.graph_op is not None:
                lines.append(f"    graph:   {d.graph_op.name} [{d.graph_op.loop_roles()}] {d.graph_op.shapes()}")
            if d.covered_by:
                lines.append(f"    covered by: {', '.join(d.covered_by)}")
            if d.codegen_matcher is not None:
                lines.append(f"    match (codegen): {python_source(d.codegen_matcher)}")
            if d.graph_matcher is not None:
                lines.append(f"    match (graph):   {python_source(d.graph_matcher)}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _set_fields(model: StrategyModel) -> Iterator[tuple[str, object]]:
    """(name, value) of ``model``'s fields that differ from their defaults, but ``kind``."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if name != "kind" and value != info.default:
            yield name, value


def python_source(model: StrategyModel) -> str:
    """``model`` as the Python expression that builds it (only fields that differ from
    their defaults), e.g. ``ContractionMatch(lhs_type="f32", ..., m=[128])``."""
    parts = [f"{name}={_python_value(value)}" for name, value in _set_fields(model)]
    return f"{type(model).__name__}({', '.join(parts)})"


def python_names(model: StrategyModel) -> set[str]:
    """The class names :func:`python_source` of ``model`` calls (``model``'s and those of
    the models in its non-default fields): what a module must import to run it."""
    names = {type(model).__name__}
    for _, value in _set_fields(model):
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, StrategyModel):
                names |= python_names(item)
    return names


def _python_value(value: object) -> str:
    if isinstance(value, StrategyModel):
        return python_source(value)
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and isinstance(value[0], tuple):  # one exact alternative of a Dims group
            return _python_value(value[0])
        return "[" + ", ".join(_python_value(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _dump(model: MatcherKind | None) -> dict[str, object] | None:
    return None if model is None else model.model_dump(mode="json", exclude_defaults=True) | {"kind": model.kind}


def _tensor_type(t: bindings.TensorType) -> str:
    return "tensor<" + "".join(f"{d}x" for d in t.shape) + t.element + ">"


def matcher_for(view: OpView, function: str | None = None) -> MatcherKind | None:
    """The matcher that selects exactly ``view``: a contraction or convolution matcher with
    its element types and every dimension group (-1 for a dynamic one; strides and dilations
    too; a contraction's indexing maps where they are not the named ops' own), else the op's
    name scoped to ``function``. None when the op's element types are not tdsl's.

    A contraction with zero points (``linalg.quantized_matmul``) is no contraction to IREE's
    matcher (it wants two inputs): it is selected by its name and the exact types of its lhs,
    rhs and init (``AllOf(OpNameMatch, OperandMatch x 3)``; the init, operand 4 after the
    two zero points, has the result's type), which fix its element types and every loop."""
    types = [t.element for t in view.operands]
    known = len(types) >= 3 and all(t in ELEMENT_BITS for t in types[:2] + types[-1:])
    # A dynamic loop (-1) is matched as dynamic: dims_equal takes -1 (tdsl.model.matchers.dims).
    complete = known
    data: dict[str, object] = {"lhs_type": types[0], "rhs_type": types[1], "output_type": types[-1]} if known else {}
    if (
        view.kind == "contraction"
        and view.zero_points
        and complete
        and all(d >= 0 for t in view.operands for d in t.shape)
    ):
        lhs, rhs, result = view.operands[0], view.operands[1], view.operands[-1]
        leaves: list[MatcherKind] = [
            OpNameMatch(names=(view.name,)),
            OperandMatch(operand=0, type=_tensor_type(lhs)),
            OperandMatch(operand=1, type=_tensor_type(rhs)),
            OperandMatch(operand=2 + len(view.zero_points), type=_tensor_type(result)),
        ]
        scoped = [FunctionMatch(function=function), *leaves] if function is not None else leaves
        try:
            return AllOf(matchers=tuple(scoped))
        except StrategyError:  # a dispatch symbol FunctionMatch cannot name
            return AllOf(matchers=tuple(leaves))
    if view.kind == "contraction" and complete:
        sized = data | {role: view.sizes(role) for role in CONTRACTION_ROLES}
        # Sizes alone also select contractions of other operand or result layouts (e.g. a
        # transposed result): pin the layout, or the maps where no operand_layout spells them.
        with_layout = contraction_with_layout(sized, view.maps) if len(view.maps) == 3 else None
        found: MatcherKind = with_layout or ContractionMatch.model_validate(
            sized | ({"maps": list(view.maps)} if len(view.maps) == 3 else {})
        )
        return found
    if view.kind == "convolution" and complete:
        groups: dict[str, object] = {role: view.sizes(role) for role in CONVOLUTION_ROLES}
        groups["filter"] = groups.pop("filter_loop")
        groups |= {"strides": list(view.strides), "dilations": list(view.dilations)}
        found = ConvolutionMatch.model_validate(data | groups)
        return found
    names = OpNameMatch(names=(view.name,))
    if function is None:
        return names
    try:
        return AllOf(matchers=(FunctionMatch(function=function), names))
    except StrategyError:  # a dispatch symbol FunctionMatch cannot name (e.g. with '$')
        return names


def _phase_ir(payload: Path, flags: Sequence[str], phase: str, options: CompileOptions) -> str:
    with tempfile.TemporaryDirectory(prefix="tdsl-ops-") as tmp:
        out = Path(tmp) / f"{phase}.mlir"
        run_iree_compile(payload, [*flags, f"--compile-to={phase}", "--mlir-print-debuginfo"], out, options)
        return out.read_text()


ASYNC_SUFFIX = "$async"
"""What IREE's ABI conversion appends to a public function's name for the body it wraps
(``main_graph`` calls ``main_graph$async``, which holds the ops)."""


def graph_linalg_ops(
    payload: Path, flags: Sequence[str], options: CompileOptions = DEFAULT_OPTIONS
) -> list[bindings.LinalgOp]:
    """The linalg ops of ``payload`` as graph-level strategies see them: after IREE's input
    conversion (the ``abi`` phase), where a torch/ONNX-dialect program is linalg, or, when
    ``flags`` run passes before the preprocessing transform spec
    (``--iree-preprocessing-pass-pipeline``), after those (the ``preprocessing`` phase);
    each op's ``function`` is the public function it runs in (:data:`ASYNC_SUFFIX` removed).
    ``flags`` are the whole command (extra flags included); ``options`` give the limits."""
    phase = "preprocessing" if any(f.startswith(PREPROCESSING_PIPELINE) for f in flags) else "abi"
    ops = bindings.linalg_ops(_phase_ir(payload, flags, phase, options))
    return [
        replace(op, function=op.function[: -len(ASYNC_SUFFIX)])
        if op.function and op.function.endswith(ASYNC_SUFFIX)
        else op
        for op in ops
    ]


def _configured_ir(payload: Path, flags: Sequence[str], options: CompileOptions) -> tuple[str, Launches]:
    """The IR after ``executable-configurations`` and the launches of the same run's stream
    statistics (none when the program has no dispatch)."""
    with tempfile.TemporaryDirectory(prefix="tdsl-ops-stats-") as tmp:
        statistics = Path(tmp) / STATISTICS_FILE
        ir = _phase_ir(payload, [*flags, *statistics_flags(statistics)], "executable-configurations", options)
        return ir, read_launches(statistics.read_text()) if statistics.is_file() else Launches({})


_FILE_LOCATION = re.compile(r'^loc\("[^"]*":(\d+):(\d+)\)$')


def _site(op: bindings.LinalgOp) -> str:
    """Where ``op`` came from in the source: ``line:column`` for a file location (the file
    name differs between phases and dumps), else the location as printed (e.g. an ONNX
    node name)."""
    found = _FILE_LOCATION.match(op.location)
    return f"{found.group(1)}:{found.group(2)}" if found else op.location


def coverage(
    payload: Path,
    strategies: StrategySet,
    target: str,
    options: CompileOptions = DEFAULT_OPTIONS,
) -> dict[str, list[str]]:
    """{source site: names of the strategies applied there}: compiles ``payload`` with
    ``strategies`` and reads the tdsl markers off the configured dispatches' ops; where the
    target peels (:attr:`tdsl.CpuTarget.peel_vector_loops`), the root ops peeling changes
    are covered by that knob (:mod:`tdsl.compiler.peeling`)."""
    applied: dict[str, list[str]] = {}
    rendered = render(strategies, target)
    with tempfile.TemporaryDirectory(prefix="tdsl-ops-cover-") as tmp:
        rendered.write(tmp)
        debuginfo = replace(options, extra_flags=(*options.extra_flags, "--mlir-print-debuginfo"))
        configured = compile_to_phase(payload, rendered, Path(tmp), Phase.EXECUTABLE_CONFIGURATIONS, debuginfo)
    for op in bindings.linalg_ops(configured):
        for key in (LAYOUT_MARKER, MARKER):
            name = op.values.get(key)
            if isinstance(name, str) and name not in applied.setdefault(_site(op), []):
                applied[_site(op)].append(name)
    if PEEL_FLAG in strategies.target(target).compile_flags():
        for op in peeled_ops(configured):
            if PEELING_KNOB not in applied.setdefault(_site(op), []):
                applied[_site(op)].append(PEELING_KNOB)
    return applied


def _bytes(types: Sequence[bindings.TensorType | None]) -> int | None:
    """Bytes of the buffers of ``types`` together; None where one is not a static tensor
    of an element type tdsl knows."""
    total = 0
    for t in types:
        if t is None or t.element not in ELEMENT_BITS or any(d < 0 for d in t.shape):
            return None
        total += -(-math.prod(t.shape) * ELEMENT_BITS[t.element] // 8)
    return total


def _graph_op(root: bindings.LinalgOp, candidates: list[bindings.LinalgOp]) -> bindings.LinalgOp | None:
    """The graph-level op ``root`` came from, among the ops of its source site: one of the
    same kind (contraction, convolution), else another contraction or convolution (a 1x1
    convolution reaches codegen as a matmul-like generic), else one of the same name, else
    none; among those, one with as many loop iterations as ``root`` first (an ONNX GRU or
    LSTM node imports to several matmuls of different sizes at one site; codegen drops unit
    loops and transposes, which keeps the count). A site can hold several ops (an ONNX node
    that imports to a broadcast and a matmul, a padded convolution whose pad copy is a
    dispatch of its own), and a root that is neither a contraction nor a convolution never
    takes one of those."""
    computes = ("contraction", "convolution")
    same = [op for op in candidates if op.name == root.name or (root.kind in computes and op.kind in computes)]
    ranked = sorted(
        same,
        key=lambda op: (
            op.kind != root.kind or root.kind == "other",
            _iterations(op) != _iterations(root),
            op.name != root.name,
        ),
    )
    return ranked[0] if ranked else None


def _iterations(op: bindings.LinalgOp) -> int | None:
    """How many points ``op``'s loops span; None when a loop is dynamic."""
    return None if any(size < 0 for size in op.loop_sizes) else math.prod(op.loop_sizes)


def _root(ops: list[bindings.LinalgOp]) -> bindings.LinalgOp | None:
    """The op codegen configured as the root: a configured contraction or convolution, else
    any configured op, else the first contraction or convolution, else the first op."""
    configured = [op for op in ops if "lowering_config" in op.values]
    for candidates in (configured, ops):
        for op in candidates:
            if op.kind in ("contraction", "convolution"):
                return op
        if candidates:
            return candidates[0]
    return None


def list_dispatches(
    payload: Path | str,
    target: Target | str,
    *,
    options: CompileOptions = DEFAULT_OPTIONS,
    ready: StrategySet | None = None,
) -> ProgramOps:
    """Every dispatch of ``payload`` compiled for ``target`` with IREE's defaults; see the
    module docstring. With ``ready`` (a set with rules for ``target``), each dispatch also
    lists the strategies of that set that apply to its root op. ``target`` is a target
    model or the name of a default one (:func:`tdsl.targets.resolve`)."""
    payload = Path(payload)
    target = resolve(target)
    flags = [*target.compile_flags(), *options.extra_flags]
    graph = graph_linalg_ops(payload, flags, options)
    configured_ir, launches = _configured_ir(payload, flags, options)
    by_site: dict[str, list[bindings.LinalgOp]] = {}
    for graph_op in graph:
        by_site.setdefault(_site(graph_op), []).append(graph_op)
    summaries = bindings.walk(configured_ir)
    functions = [
        op
        for op in summaries
        if op.name == "func.func" and isinstance(op.values.get("translation_info"), bindings.TranslationInfo)
    ]
    ops = bindings.linalg_ops(configured_ir)
    bound = bindings.bound_types(configured_ir)
    dispatches: list[Dispatch] = []
    roots: list[bindings.LinalgOp | None] = []
    for func in functions:
        name = func.function or "?"
        inside = [op for op in ops if op.function == name]
        root_op = _root(inside)
        roots.append(root_op)
        info = func.values["translation_info"]
        assert isinstance(info, bindings.TranslationInfo)
        root = OpView.of(root_op) if root_op else None
        source = _graph_op(root_op, by_site.get(_site(root_op), [])) if root_op else None
        graph_view = OpView.of(source) if source else None
        lowering = next(
            (
                op.attributes["lowering_config"]
                for op in summaries
                if op.function == name
                and root_op is not None
                and op.name == root_op.name
                and "lowering_config" in op.attributes
            ),
            None,
        )
        dispatches.append(
            Dispatch(
                name=name,
                launches=launches.per_call.get(name, 0),
                launches_at_load=launches.at_load.get(name, 0),
                bound_bytes=_bytes(bound[name]) if name in bound else None,
                root=root,
                graph_op=graph_view,
                pipeline=info.pipeline,
                lowering_config=lowering,
                codegen_matcher=matcher_for(root, name) if root else None,
                graph_matcher=matcher_for(graph_view) if graph_view and graph_view.kind != "other" else None,
                odd_loops=next((loops for loops in map(odd_loops, inside) if loops), ()),
            )
        )
    if ready is None:
        return ProgramOps(payload, target.name, tuple(dispatches))
    covered, notes = _coverage_or_note(payload, ready, target.name, options)
    for i, (d, root_op) in enumerate(zip(dispatches, roots)):
        if root_op is not None:
            dispatches[i] = replace(d, covered_by=tuple(covered.get(_site(root_op), ())))
    return ProgramOps(payload, target.name, tuple(dispatches), notes)


def _coverage_or_note(
    payload: Path, ready: StrategySet, target: str, options: CompileOptions
) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """:func:`coverage` of ``ready``, made again without its ready program knobs where its
    build fails with them; a build that fails anyway is a note, never the listing's end."""
    strategy_set, target_model = ready.for_target(target)
    try:
        covered, notes = build_with_fallback(
            strategy_set, target_model, lambda found, _: coverage(payload, found, target, options)
        )
    except CompileFailed as failed:
        return {}, (f"coverage of {ready.name} unknown (no 'covered by' lines): its build failed: {failed}",)
    return covered, tuple(f"coverage of {ready.name}: {note}" for note in notes)
