"""Reading an action sequence: what it does to the matched op.

* a config action (``transform.annotate %op "compilation_info" = %config`` and friends,
  the config a parameter from the matcher or a constant of its own): :class:`ConfigAction`;
* a graph-level layout action (``transform.structured.generalize`` / ``interchange`` /
  ``pack_greedily`` / ``pack`` / ``pack_transpose`` / ``specialize`` / ``lower_pack``, the
  reshape propagation and consumer interchange tdsl renders): the fields of a
  :class:`DataLayout` (:func:`read_layout`);
* tdsl's codegen action (the ``tdsl.root`` marker and a ``translation_info`` pointing at a
  lowering sequence) and that sequence: a :class:`Codegen` (:func:`read_codegen`).

Both readers look each op up by name (one reader per op) and read the attributes of the
ops a strategy field renders to through their declarations
(:mod:`tdsl.render.transform_ops`), the ones the templates print them from.

tdsl's own markers (``tdsl.applied``, ``tdsl.rule``, ``tdsl.layout``, ``tdsl.layout_rule``,
``tdsl.root``) give the strategy name and rule index back and are not kept (rendering adds
them again). Anything else raises :class:`~tdsl.importer.problems.Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, TypeVar

from ..bindings import Attr, Sym, TranslationInfo, Unit
from ..errors import StrategyError
from ..model.base import StrategyModel
from ..model.codegen import Codegen, Fuse, GpuThreads, MmaChain, TileUsingFor, TileUsingForall, VectorLowering
from ..model.layout import DataLayout, Pack, PackGreedily, PackTranspose
from ..render import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, ROOT_MARKER, RULE_MARKER
from ..render.transform_ops import (
    CLEANUP_PATTERNS,
    CONVERT_TO_MULTI_MMA,
    GENERALIZE,
    INTERCHANGE,
    LOWER_CONTRACTION,
    LOWER_PACK,
    LOWER_TRANSFER,
    LOWER_TRANSPOSE,
    LOWER_UNPACK,
    MAP_NESTED_FORALL_TO_GPU_THREADS,
    PACK,
    PACK_GREEDILY,
    PACK_TRANSPOSE,
    PROMOTE_OPERANDS,
    SPECIALIZE,
    TILE_USING_FOR,
    TILE_USING_FORALL,
    OpAttributeError,
    TransformOp,
)
from .ir import Module, Op, Sequence
from .problems import Unsupported

TDSL_MARKERS = (MARKER, RULE_MARKER, LAYOUT_MARKER, LAYOUT_RULE_MARKER, ROOT_MARKER)
M = TypeVar("M", bound=StrategyModel)


@dataclass
class Marks:
    """What tdsl's markers in an action say: the strategy name and the rule index."""

    name: Optional[str] = None
    rule: Optional[int] = None


@dataclass
class ConfigAction:
    """The annotations a config action puts on the matched op, in order: (attribute name,
    value (None: unit), line)."""

    annotations: list[tuple[str, Optional[Attr], Optional[int]]]
    marks: Marks
    codegen_spec: Optional[str] = None


def _marker(name: str, value: Optional[Attr], marks: Marks) -> bool:
    """Records tdsl's marker ``name``; False for any other annotation."""
    if name in (MARKER, LAYOUT_MARKER, ROOT_MARKER) and isinstance(value, str):
        marks.name = value
        return True
    if name in (RULE_MARKER, LAYOUT_RULE_MARKER) and isinstance(value, int):
        marks.rule = value
        return True
    return False


def read_config_action(
    sequence: Sequence, bound: dict[int, Optional[Attr]], lines: Optional[dict[int, Optional[int]]] = None
) -> ConfigAction:
    """A config action: only parameter constants, annotations of the matched op (its first
    argument) and the yield; ``bound`` gives the values of its parameter arguments (the
    matcher's constants, defined at ``lines``). tdsl's codegen action is a config action
    too: it annotates the enclosing function with a translation_info whose ``codegen_spec``
    names the lowering sequence. Each annotation's line is where its value is defined."""
    if not sequence.args:
        raise Unsupported(
            "transform.named_sequence", sequence.line, f"an action @{sequence.name} that takes the matched op"
        )
    op_value = sequence.args[0]
    params: dict[int, Optional[Attr]] = dict(bound)
    where: dict[int, Optional[int]] = dict(lines or {})
    functions: set[int] = set()
    action = ConfigAction([], Marks())
    for op in sequence.op.body.ops:
        if op.name == "transform.param.constant":
            params[op.results[0]] = op.attr("value")
            where[op.results[0]] = op.line
        elif op.name == "transform.get_parent_op" and op.operands[0] == op_value and op.attr("op_name") == "func.func":
            functions.add(op.results[0])
        elif op.name == "transform.annotate":
            name = op.attr("name")
            assert isinstance(name, str)
            value: Optional[Attr] = None
            line = op.line
            if len(op.operands) > 1:
                line = where.get(op.operands[1]) or op.line
                if op.operands[1] not in params or params[op.operands[1]] is None:
                    raise Unsupported(
                        op.name,
                        op.line,
                        f"the value of {name!r}: a parameter tdsl can read (a transform.param.constant)",
                    )
                value = params[op.operands[1]]
            if op.operands[0] in functions:
                if name == "translation_info" and isinstance(value, TranslationInfo) and value.codegen_spec is not None:
                    action.codegen_spec = value.codegen_spec
                    continue
                raise Unsupported(
                    op.name,
                    op.line,
                    f"an annotation of the function ({name!r}): tdsl's codegen action sets translation_info to a lowering sequence only",
                )
            if op.operands[0] != op_value:
                raise Unsupported(op.name, op.line, "an annotation of another op than the matched one")
            if not _marker(name, value, action.marks):
                action.annotations.append((name, value, line))
        elif op.name == "transform.yield":
            continue
        else:
            raise Unsupported(
                op.name,
                op.line,
                "tdsl's config actions only annotate the matched op (compilation_info, decomposition_config)",
            )
    return action


# --------------------------------------------------------------------------------------
# DataLayout


_STAGES = {
    "generalize": 1,
    "interchange": 2,
    "propagate_reshapes": 2,
    "consumer_interchange": 2,
    "pack": 3,
    "pack_transposes": 4,
    "specialize": 5,
    "lower_packs": 6,
}


@dataclass
class _Layout:
    fields: dict[str, object] = field(default_factory=dict)
    marks: Marks = field(default_factory=Marks)
    params: dict[int, Optional[Attr]] = field(default_factory=dict)
    transposes: list[PackTranspose] = field(default_factory=list)
    stage: int = 0
    compute: int = -1
    consumers: dict[int, int] = field(default_factory=dict)  # get_consumers_of_result of compute
    producers: dict[int, int] = field(default_factory=dict)  # value -> operand index
    scopes: set[int] = field(default_factory=set)
    selected: dict[int, int] = field(default_factory=dict)
    lowered: set[int] = field(default_factory=set)  # operand indices whose pack / unpack is lowered

    def on_compute(self, op: Op) -> bool:
        """Whether ``op`` acts on the op the layout rewrites."""
        return bool(op.operands) and op.operands[0] == self.compute

    def step(self, op: Op, step: str, result: bool = True) -> None:
        """Enters the DataLayout step ``step`` (in order); with ``result``, ``op``'s first
        result is the rewritten op from now on."""
        stage = _STAGES[step]
        if stage < self.stage:
            raise Unsupported(
                op.name,
                op.line,
                f"{step} after a later step: DataLayout runs generalize, interchange, pack, pack transposes, specialize, lower packs in that order",
            )
        self.stage = stage
        if result:
            self.compute = op.results[0]


def read_layout(sequence: Sequence) -> tuple[dict[str, object], Marks]:
    """The :class:`DataLayout` fields of a layout action (name not included)."""
    if len(sequence.args) != 1:
        raise Unsupported(
            "transform.named_sequence",
            sequence.line,
            f"a layout action @{sequence.name} that takes only the matched op",
        )
    state = _Layout(compute=sequence.args[0])
    for op in sequence.op.body.ops:
        reader = _LAYOUT_READERS.get(op.name)
        if reader is None or not reader(op, state):
            raise Unsupported(op.name, op.line, "an op of a graph-level layout action tdsl's DataLayout does not have")
    fields = dict(state.fields)
    if state.transposes:
        fields["pack_transposes"] = tuple(state.transposes)
    if state.lowered:
        # The result's unpack alone is lower_unpack; any pack lowered is lower_packs (all of them).
        fields["lower_unpack" if state.lowered == {2} else "lower_packs"] = True
    return fields, state.marks


def _read(op: Op, declared: TransformOp) -> dict[str, object]:
    """The fields of ``op``'s attributes as ``declared`` reads them."""
    try:
        return declared.read(op.attrs)
    except OpAttributeError as err:
        raise Unsupported(op.name, op.line, f"{err.attribute}: {err.expected}") from None


def _build(op: Op, declared: TransformOp, model: type[M], **given: object) -> M:
    """``model`` from ``op``'s attributes as ``declared`` reads them and the fields ``given``."""
    try:
        return declared.build(model, op.attrs, **given)
    except OpAttributeError as err:
        raise Unsupported(op.name, op.line, f"{err.attribute}: {err.expected}") from None
    except StrategyError as err:
        raise Unsupported(op.name, op.line, f"attributes {model.__name__} accepts ({err})") from None


def _param(op: Op, state: _Layout) -> bool:
    state.params[op.results[0]] = op.attr("value")
    return True


def _annotate(op: Op, state: _Layout) -> bool:
    label = op.attr("name")
    value = state.params.get(op.operands[1]) if len(op.operands) > 1 else None
    if isinstance(label, str) and state.on_compute(op) and _marker(label, value, state.marks):
        return True
    raise Unsupported(op.name, op.line, "an annotation in a layout action (tdsl adds only its own markers)")


def _flag(step: str) -> Callable[[Op, _Layout], bool]:
    """The reader of an op without attributes that sets the DataLayout flag ``step``."""

    def read(op: Op, state: _Layout) -> bool:
        if not state.on_compute(op):
            return False
        state.step(op, step)
        state.fields[step] = True
        return True

    return read


def _interchange(op: Op, state: _Layout) -> bool:
    if state.on_compute(op):
        state.step(op, "interchange")
        state.fields.update(_read(op, INTERCHANGE))
        return True
    if op.operands[0] in state.consumers:
        state.step(op, "consumer_interchange", result=False)
        state.fields["consumer_interchange"] = _read(op, INTERCHANGE)["interchange"]
        return True
    return False


def _parent(op: Op, state: _Layout) -> bool:
    if state.on_compute(op) and isinstance(op.attr("isolated_from_above"), Unit):
        state.scopes.add(op.results[0])
        return True
    return False


def _patterns(op: Op, state: _Layout) -> bool:
    if op.operands[0] not in state.scopes:
        return False
    if [o.name for o in op.body.ops] != ["transform.apply_patterns.iree.bubble_expand"]:
        raise Unsupported(
            op.name, op.line, "pattern sets other than iree.bubble_expand (DataLayout.propagate_reshapes)"
        )
    state.step(op, "propagate_reshapes", result=False)
    state.fields["propagate_reshapes"] = True
    return True


def _consumers(op: Op, state: _Layout) -> bool:
    if state.on_compute(op) and op.attr("result_number") == 0:
        state.consumers[op.results[0]] = 0
        return True
    return False


def _select(op: Op, state: _Layout) -> bool:
    if op.operands[0] in state.consumers and op.attr("op_name") == "linalg.generic":
        state.selected[op.results[0]] = 0
        return True
    return False


def _consumer_sequence(op: Op, state: _Layout) -> bool:
    if not op.operands or op.operands[0] not in state.selected:
        return False
    inner = [o for o in op.body.ops if o.name != "transform.yield"]
    if len(inner) == 1 and inner[0].name == INTERCHANGE.name and inner[0].operands[0] == op.body.args[0]:
        state.step(op, "consumer_interchange", result=False)
        state.fields["consumer_interchange"] = _read(inner[0], INTERCHANGE)["interchange"]
        return True
    raise Unsupported(
        op.name, op.line, "a sequence over the consumers that only interchanges them (DataLayout.consumer_interchange)"
    )


def _pack(declared: TransformOp, model: type[PackGreedily] | type[Pack]) -> Callable[[Op, _Layout], bool]:
    """The reader of the pack op ``declared``: DataLayout.pack is its ``model``."""

    def read(op: Op, state: _Layout) -> bool:
        if not state.on_compute(op):
            return False
        state.step(op, "pack")
        state.fields["pack"] = _build(op, declared, model)
        return True

    return read


def _producer(op: Op, state: _Layout) -> bool:
    if not state.on_compute(op):
        return False
    number = op.attr("operand_number")
    assert isinstance(number, int)
    state.producers[op.results[0]] = number
    return True


def _pack_transpose(op: Op, state: _Layout) -> bool:
    if len(op.operands) != 2 or op.operands[1] != state.compute:
        return False
    state.step(op, "pack_transposes")
    target = op.operands[0]
    if target in state.consumers:
        operand = "result"
    elif state.producers.get(target) in (0, 1):
        operand = ("lhs", "rhs")[state.producers[target]]
    else:
        raise Unsupported(op.name, op.line, "a pack transpose of the packed op's lhs, rhs or result")
    state.transposes.append(_build(op, PACK_TRANSPOSE, PackTranspose, operand=operand))
    return True


def _lower(op: Op, state: _Layout) -> bool:
    target = op.operands[0]
    if target not in state.producers and target not in state.consumers:
        return False
    state.step(op, "lower_packs", result=False)
    state.lowered.add(2 if target in state.consumers else state.producers[target])
    return True


_LAYOUT_READERS: dict[str, Callable[[Op, _Layout], bool]] = {
    "transform.param.constant": _param,
    "transform.annotate": _annotate,
    "transform.yield": lambda op, state: True,
    GENERALIZE.name: _flag("generalize"),
    INTERCHANGE.name: _interchange,
    "transform.get_parent_op": _parent,
    "transform.apply_patterns": _patterns,
    "transform.get_consumers_of_result": _consumers,
    "transform.select": _select,
    "transform.sequence": _consumer_sequence,
    PACK_GREEDILY.name: _pack(PACK_GREEDILY, PackGreedily),
    PACK.name: _pack(PACK, Pack),
    "transform.get_producer_of_operand": _producer,
    PACK_TRANSPOSE.name: _pack_transpose,
    SPECIALIZE.name: _flag("specialize"),
    LOWER_PACK.name: _lower,
    LOWER_UNPACK.name: _lower,
}
"""Op name -> its reader: True when it read the op into the layout, False when the op is
not one tdsl's DataLayout renders there (raising names a more precise refusal)."""


def build_layout(name: str, fields: dict[str, object], line: Optional[int]) -> DataLayout:
    try:
        layout: DataLayout = DataLayout.model_validate({"name": name, **fields})
        return layout
    except StrategyError as err:
        raise Unsupported("transform.named_sequence", line, f"a layout DataLayout accepts ({err})") from None


# --------------------------------------------------------------------------------------
# Codegen


_CLEANUP = {op: entry for entry, op in CLEANUP_PATTERNS.items()}
"""The pattern op -> the Codegen.cleanup entry it renders."""
_VECTOR_LOWERING = (LOWER_CONTRACTION, LOWER_TRANSPOSE, LOWER_TRANSFER)


class _Codegen:
    """What a lowering sequence read so far says about its :class:`Codegen` (one method per
    op tdsl renders there; other ops are its fixed plumbing)."""

    def __init__(self, name: str, root: str):
        self.fields: dict[str, object] = {"kind": "codegen", "name": name, "root": root, "vectorize": False}
        self.tiling: list[TileUsingForall | TileUsingFor] = []
        self.fusion: list[dict[str, object]] = []
        self.into: list[tuple[int, ...]] = []
        self.fused: dict[int, int] = {}  # producer handle -> fusion index
        self.foralls: dict[int, int] = {}  # forall handle -> tiling level
        self.cleanup: list[str] = []
        self.lowering: dict[str, object] = {}
        self.func_matches = 0
        self.vectorized = self.bufferized = False

    def match(self, op: Op) -> None:
        ops = op.attr("ops")
        if ops == ("func.func",):
            self.func_matches += 1
            self.vectorized = self.vectorized or self.func_matches == 2
        elif isinstance(ops, tuple) and op.attr("op_attrs") is None:
            self.fused[op.results[0]] = len(self.fusion)
            self.fusion.append({"producers": ops})
            self.into.append(())

    def eliminate_empty_tensors(self, op: Op) -> None:
        self.bufferized = True

    def tile_using_forall(self, op: Op) -> None:
        level = _build(op, TILE_USING_FORALL, TileUsingForall)
        if op.operands[0] in self.fused:
            self.fusion[self.fused[op.operands[0]]]["distribute"] = level
            return
        self.foralls[op.results[1]] = len(self.tiling)
        self.tiling.append(level)

    def tile_using_for(self, op: Op) -> None:
        self.tiling.append(_build(op, TILE_USING_FOR, TileUsingFor))

    def fuse_into_containing_op(self, op: Op) -> None:
        j = self.fused.get(op.operands[0])
        if j is None or op.operands[1] not in self.foralls:
            raise Unsupported(op.name, op.line, "a fusion of matched producers into a tiling level's forall")
        self.into[j] = (*self.into[j], self.foralls[op.operands[1]])
        self.fused[op.results[0]] = j

    def promote_operands(self, op: Op) -> None:
        self.fields.update(_read(op, PROMOTE_OPERANDS))
        self.fields["promote_after"] = len(self.tiling) - 1

    def convert_to_multi_mma(self, op: Op) -> None:
        self.fields["mma"] = _build(op, CONVERT_TO_MULTI_MMA, MmaChain)

    def vectorize(self, op: Op) -> None:
        if op.name != "transform.apply_registered_pass" or op.attr("pass_name") == "iree-codegen-generic-vectorization":
            self.fields["vectorize"] = self.vectorized = True

    def apply_patterns(self, op: Op) -> None:
        patterns = [o.name for o in op.body.ops]
        if patterns and all(p in _CLEANUP for p in patterns) and self.vectorized and not self.bufferized:
            self.cleanup.extend(_CLEANUP[p] for p in patterns)
        for inner in op.body.ops:
            for declared in _VECTOR_LOWERING:
                if inner.name == declared.name:
                    self.lowering.update(_read(inner, declared))

    def map_nested_forall_to_gpu_threads(self, op: Op) -> None:
        self.fields["gpu"] = _build(op, MAP_NESTED_FORALL_TO_GPU_THREADS, GpuThreads)

    def codegen(self, line: Optional[int]) -> Codegen:
        fusion = tuple(Fuse.model_validate({**f, "into": into}) for f, into in zip(self.fusion, self.into))
        fields = {**self.fields, "tiling": tuple(self.tiling), "fusion": fusion, "cleanup": tuple(self.cleanup)}
        if self.lowering:
            fields["vector_lowering"] = VectorLowering.model_validate(self.lowering)
        try:
            codegen: Codegen = Codegen.model_validate(fields)
            return codegen
        except StrategyError as err:
            raise Unsupported(
                "transform.named_sequence", line, f"a lowering sequence tdsl's Codegen renders ({err})"
            ) from None


_CODEGEN_READERS: dict[str, Callable[[_Codegen, Op], None]] = {
    "transform.structured.match": _Codegen.match,
    "transform.iree.eliminate_empty_tensors": _Codegen.eliminate_empty_tensors,
    TILE_USING_FORALL.name: _Codegen.tile_using_forall,
    TILE_USING_FOR.name: _Codegen.tile_using_for,
    "transform.structured.fuse_into_containing_op": _Codegen.fuse_into_containing_op,
    PROMOTE_OPERANDS.name: _Codegen.promote_operands,
    CONVERT_TO_MULTI_MMA.name: _Codegen.convert_to_multi_mma,
    "transform.structured.vectorize_children_and_apply_patterns": _Codegen.vectorize,
    "transform.apply_registered_pass": _Codegen.vectorize,
    "transform.apply_patterns": _Codegen.apply_patterns,
    MAP_NESTED_FORALL_TO_GPU_THREADS.name: _Codegen.map_nested_forall_to_gpu_threads,
}
"""Op name -> the :class:`_Codegen` method that reads it."""


CODEGEN_PLUMBING = frozenset(
    {
        "transform.annotate",
        "transform.apply_cse",
        "transform.apply_patterns.canonicalization",
        "transform.apply_patterns.iree.drop_inner_tiled_unit_dims",
        "transform.apply_patterns.iree.lower_inner_tiled",
        "transform.apply_patterns.iree.unroll_multi_mma",
        "transform.apply_patterns.vector.lower_shape_cast",
        "transform.apply_patterns.vector.transfer_permutation_patterns",
        "transform.get_parent_op",
        "transform.iree.bufferize",
        "transform.iree.distribute_inner_tiled",
        "transform.iree.forall_to_lanes",
        "transform.iree.forall_to_workgroup",
        "transform.iree.gpu_distribute_shared_memory_copy",
        "transform.iree.hoist_static_alloc",
        "transform.iree.populate_workgroup_count_region_using_num_threads_slice",
        "transform.param.constant",
        "transform.structured.pack",
        "transform.util.eliminate_hoistable_conversions",
        "transform.yield",
    }
)
"""The ops tdsl's codegen template (``templates/strategies/codegen.mlir.j2``) renders around
the steps a :class:`Codegen` reads back (:data:`_CODEGEN_READERS`, the cleanup and vector
lowering patterns)."""


def _unrendered(ops: list[Op]) -> Optional[Op]:
    """The first op (patterns included) that tdsl's codegen template never renders."""
    known = set(_CODEGEN_READERS) | CODEGEN_PLUMBING | set(_CLEANUP) | {d.name for d in _VECTOR_LOWERING}
    for op in ops:
        if op.name not in known:
            return op
        inner = _unrendered([c for region in op.regions for block in region for c in block.ops])
        if inner is not None:
            return inner
    return None


def read_codegen(module: Module, name: str, definition: Sequence, root: str, strict: bool = False) -> Codegen:
    """The :class:`Codegen` strategy whose lowering sequence is ``definition``. A sequence tdsl
    did not render (``strict``) may hold only ops tdsl's Codegen renders: any other raises
    :class:`Unsupported` naming it (its steps would be lost, not rendered back)."""
    if strict:
        stray = _unrendered(definition.op.body.ops)
        if stray is not None:
            raise Unsupported(
                stray.name,
                stray.line,
                f"an op of the lowering sequence @{definition.name} that tdsl's Codegen does not render",
            )
    reader = _Codegen(name, root)
    for op in definition.op.body.ops:
        read = _CODEGEN_READERS.get(op.name)
        if read is not None:
            read(reader, op)
    return reader.codegen(definition.line)


def codegen_spec(value: Optional[Attr]) -> Optional[str]:
    if isinstance(value, TranslationInfo):
        return value.codegen_spec
    if isinstance(value, Sym):
        return value.name
    return None
