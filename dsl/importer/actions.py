"""Reading an action sequence: what it does to the matched op.

* a config action (``transform.annotate %op "compilation_info" = %config`` and friends,
  the config a parameter from the matcher or a constant of its own): :class:`ConfigAction`;
* a graph-level layout action (``transform.structured.generalize`` / ``interchange`` /
  ``pack_greedily`` / ``pack`` / ``pack_transpose`` / ``specialize`` / ``lower_pack``, the
  reshape propagation and consumer interchange tdsl renders): the fields of a
  :class:`DataLayout` (:func:`read_layout`);
* tdsl's codegen action (the ``tdsl.root`` marker and a ``translation_info`` pointing at a
  lowering sequence) and that sequence: a :class:`Codegen` (:func:`read_codegen`).

tdsl's own markers (``tdsl.applied``, ``tdsl.rule``, ``tdsl.layout``, ``tdsl.layout_rule``,
``tdsl.root``) give the strategy name and rule index back and are not kept (rendering adds
them again). Anything else raises :class:`~tdsl.importer.problems.Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import StrategyError
from ..render import LAYOUT_MARKER, LAYOUT_RULE_MARKER, MARKER, ROOT_MARKER, RULE_MARKER
from ..model.codegen import Codegen, Fuse, GpuThreads, MmaChain, TileUsingFor, TileUsingForall, VectorLowering
from ..model.layout import DataLayout, Pack, PackGreedily, PackTranspose
from ..bindings import Attr, Mma, Opaque, Sym, TranslationInfo, Unit
from .ir import Module, Op, Sequence
from .problems import Unsupported

TDSL_MARKERS = (MARKER, RULE_MARKER, LAYOUT_MARKER, LAYOUT_RULE_MARKER, ROOT_MARKER)


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


def read_config_action(sequence: Sequence, bound: dict[int, Optional[Attr]], lines: Optional[dict[int, Optional[int]]] = None) -> ConfigAction:
    """A config action: only parameter constants, annotations of the matched op (its first
    argument) and the yield; ``bound`` gives the values of its parameter arguments (the
    matcher's constants, defined at ``lines``). tdsl's codegen action is a config action
    too: it annotates the enclosing function with a translation_info whose ``codegen_spec``
    names the lowering sequence. Each annotation's line is where its value is defined."""
    if not sequence.args:
        raise Unsupported("transform.named_sequence", sequence.line, f"an action @{sequence.name} that takes the matched op")
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
                    raise Unsupported(op.name, op.line, f"the value of {name!r}: a parameter tdsl can read (a transform.param.constant)")
                value = params[op.operands[1]]
            if op.operands[0] in functions:
                if name == "translation_info" and isinstance(value, TranslationInfo) and value.codegen_spec is not None:
                    action.codegen_spec = value.codegen_spec
                    continue
                raise Unsupported(op.name, op.line, f"an annotation of the function ({name!r}): tdsl's codegen action sets translation_info to a lowering sequence only")
            if op.operands[0] != op_value:
                raise Unsupported(op.name, op.line, "an annotation of another op than the matched one")
            if not _marker(name, value, action.marks):
                action.annotations.append((name, value, line))
        elif op.name == "transform.yield":
            continue
        else:
            raise Unsupported(op.name, op.line, "tdsl's config actions only annotate the matched op (compilation_info, decomposition_config)")
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
    fields: dict[str, Any] = field(default_factory=dict)
    transposes: list[PackTranspose] = field(default_factory=list)
    stage: int = 0
    compute: int = -1
    consumers: dict[int, int] = field(default_factory=dict)  # get_consumers_of_result of compute
    producers: dict[int, int] = field(default_factory=dict)  # value -> operand index
    scopes: set[int] = field(default_factory=set)
    selected: dict[int, int] = field(default_factory=dict)
    lowered: set[int] = field(default_factory=set)  # operand indices whose pack / unpack is lowered


def read_layout(sequence: Sequence) -> tuple[dict[str, Any], Marks]:
    """The :class:`DataLayout` fields of a layout action (name not included)."""
    if len(sequence.args) != 1:
        raise Unsupported("transform.named_sequence", sequence.line, f"a layout action @{sequence.name} that takes only the matched op")
    state = _Layout(compute=sequence.args[0])
    marks = Marks()
    params: dict[int, Optional[Attr]] = {}
    for op in sequence.op.body.ops:
        _layout_op(op, state, marks, params)
    fields = dict(state.fields)
    if state.transposes:
        fields["pack_transposes"] = tuple(state.transposes)
    if state.lowered:
        # The result's unpack alone is lower_unpack; any pack lowered is lower_packs (all of them).
        fields["lower_unpack" if state.lowered == {2} else "lower_packs"] = True
    return fields, marks


def _stage(state: _Layout, op: Op, step: str) -> None:
    stage = _STAGES[step]
    if stage < state.stage:
        raise Unsupported(op.name, op.line, f"{step} after a later step: DataLayout runs generalize, interchange, pack, pack transposes, specialize, lower packs in that order")
    state.stage = stage


def _layout_op(op: Op, state: _Layout, marks: Marks, params: dict[int, Optional[Attr]]) -> None:
    name = op.name
    on_compute = bool(op.operands) and op.operands[0] == state.compute
    if name == "transform.param.constant":
        params[op.results[0]] = op.attr("value")
        return
    if name == "transform.annotate":
        label = op.attr("name")
        value = params.get(op.operands[1]) if len(op.operands) > 1 else None
        if isinstance(label, str) and on_compute and _marker(label, value, marks):
            return
        raise Unsupported(name, op.line, "an annotation in a layout action (tdsl adds only its own markers)")
    if name == "transform.yield":
        return
    if name == "transform.structured.generalize" and on_compute:
        _stage(state, op, "generalize")
        state.fields["generalize"] = True
        state.compute = op.results[0]
        return
    if name == "transform.structured.interchange" and on_compute:
        _stage(state, op, "interchange")
        perm = op.attr("iterator_interchange")
        state.fields["interchange"] = perm
        state.compute = op.results[0]
        return
    if name == "transform.get_parent_op" and on_compute and isinstance(op.attr("isolated_from_above"), Unit):
        state.scopes.add(op.results[0])
        return
    if name == "transform.apply_patterns" and op.operands[0] in state.scopes:
        patterns = [o.name for o in op.body.ops]
        if patterns != ["transform.apply_patterns.iree.bubble_expand"]:
            raise Unsupported(name, op.line, "pattern sets other than iree.bubble_expand (DataLayout.propagate_reshapes)")
        _stage(state, op, "propagate_reshapes")
        state.fields["propagate_reshapes"] = True
        return
    if name == "transform.get_consumers_of_result" and on_compute and op.attr("result_number") == 0:
        state.consumers[op.results[0]] = 0
        return
    if name == "transform.select" and op.operands[0] in state.consumers and op.attr("op_name") == "linalg.generic":
        state.selected[op.results[0]] = 0
        return
    if name == "transform.sequence" and op.operands and op.operands[0] in state.selected:
        inner = [o for o in op.body.ops if o.name != "transform.yield"]
        if len(inner) == 1 and inner[0].name == "transform.structured.interchange" and inner[0].operands[0] == op.body.args[0]:
            _stage(state, op, "consumer_interchange")
            state.fields["consumer_interchange"] = inner[0].attr("iterator_interchange")
            return
        raise Unsupported(name, op.line, "a sequence over the consumers that only interchanges them (DataLayout.consumer_interchange)")
    if name == "transform.structured.interchange" and op.operands[0] in state.consumers:
        _stage(state, op, "consumer_interchange")
        state.fields["consumer_interchange"] = op.attr("iterator_interchange")
        return
    if name == "transform.structured.pack_greedily" and on_compute:
        _stage(state, op, "pack")
        padded = op.attr("matmul_padded_sizes_next_multiple_of")
        state.fields["pack"] = PackGreedily(
            matmul_packed_sizes=op.attr("static_matmul_packed_sizes"),  # type: ignore[arg-type]
            matmul_padded_sizes_next_multiple_of=padded if padded else None,  # type: ignore[arg-type]
            matmul_inner_dims_order=op.attr("matmul_inner_dims_order"),  # type: ignore[arg-type]
        )
        state.compute = op.results[0]
        return
    if name == "transform.structured.pack" and on_compute:
        _stage(state, op, "pack")
        state.fields["pack"] = Pack(packed_sizes=op.attr("static_packed_sizes"))  # type: ignore[arg-type]
        state.compute = op.results[0]
        return
    if name == "transform.get_producer_of_operand" and on_compute:
        number = op.attr("operand_number")
        assert isinstance(number, int)
        state.producers[op.results[0]] = number
        return
    if name == "transform.structured.pack_transpose" and len(op.operands) == 2 and op.operands[1] == state.compute:
        _stage(state, op, "pack_transposes")
        target = op.operands[0]
        outer, inner_perm = op.attr("outer_perm"), op.attr("inner_perm")
        if target in state.consumers:
            operand = "result"
        elif target in state.producers and state.producers[target] in (0, 1):
            operand = ("lhs", "rhs")[state.producers[target]]
        else:
            raise Unsupported(name, op.line, "a pack transpose of the packed op's lhs, rhs or result")
        state.transposes.append(
            PackTranspose(
                operand=operand,  # type: ignore[arg-type]
                outer_perm=outer if outer else None,  # type: ignore[arg-type]
                inner_perm=inner_perm if inner_perm else None,  # type: ignore[arg-type]
            )
        )
        state.compute = op.results[0]
        return
    if name == "transform.structured.specialize" and on_compute:
        _stage(state, op, "specialize")
        state.fields["specialize"] = True
        state.compute = op.results[0]
        return
    if name in ("transform.structured.lower_pack", "transform.structured.lower_unpack"):
        if op.operands[0] in state.producers or op.operands[0] in state.consumers:
            _stage(state, op, "lower_packs")
            state.lowered.add(2 if op.operands[0] in state.consumers else state.producers[op.operands[0]])
            return
    raise Unsupported(name, op.line, "an op of a graph-level layout action tdsl's DataLayout does not have")


def build_layout(name: str, fields: dict[str, Any], line: Optional[int]) -> DataLayout:
    try:
        layout: DataLayout = DataLayout.model_validate({"name": name, **fields})
        return layout
    except StrategyError as err:
        raise Unsupported("transform.named_sequence", line, f"a layout DataLayout accepts ({err})") from None


# --------------------------------------------------------------------------------------
# Codegen


_CONTRACTION = {0: "dot", 1: "llvmintr", 2: "outerproduct", 3: "parallelarith"}
_TRANSPOSE = {0: "eltwise", 1: "llvmintr", 2: "shuffle_1d", 3: "shuffle_16x16"}
_CLEANUP = {
    "transform.apply_patterns.linalg.tiling_canonicalization": "tiling_canonicalization",
    "transform.apply_patterns.scf.for_loop_canonicalization": "for_loop_canonicalization",
    "transform.apply_patterns.canonicalization": "canonicalization",
}


def _mapping(value: Optional[Attr], op: Op) -> tuple[str, ...]:
    if not isinstance(value, tuple):
        raise Unsupported(op.name, op.line, "a forall with a #gpu mapping")
    names = []
    for entry in value:
        text = entry.text if isinstance(entry, Opaque) else str(entry)
        if not text.startswith("#gpu.") or "<" not in text:
            raise Unsupported(op.name, op.line, f"a #gpu.block / thread / warp mapping, not {text}")
        processor = text[len("#gpu.") : text.index("<")]
        names.append(f"{processor}_{text[text.index('<') + 1 : -1]}")
    return tuple(names)


def read_codegen(module: Module, name: str, definition: Sequence, root: str) -> Codegen:
    """The :class:`Codegen` strategy whose lowering sequence tdsl rendered as ``definition``."""
    fields: dict[str, Any] = {"kind": "codegen", "name": name, "root": root}
    tiling: list[dict[str, Any]] = []
    fusion: list[dict[str, Any]] = []
    fused: dict[int, int] = {}  # producer handle -> fusion index
    foralls: dict[int, int] = {}  # forall handle -> tiling level
    cleanup: list[str] = []
    lowering: dict[str, Any] = {}
    fields["vectorize"] = False
    fields["fusion"] = ()
    fields["cleanup"] = ()
    func_matches = 0
    vectorized = bufferized = False
    for op in definition.op.body.ops:
        n = op.name
        if n == "transform.structured.match" and op.attr("ops") == ("func.func",):
            func_matches += 1
            vectorized = vectorized or func_matches == 2
        elif n == "transform.iree.eliminate_empty_tensors":
            bufferized = True
        if n == "transform.structured.tile_using_forall":
            sizes = op.attr("static_tile_sizes")
            threads = op.attr("static_num_threads")
            level: dict[str, Any] = {"kind": "forall", "mapping": _mapping(op.attr("mapping"), op)}
            if sizes:
                level["tile_sizes"] = sizes
            else:
                level["num_threads"] = threads
            if op.operands[0] in fused:
                fusion[fused[op.operands[0]]]["distribute"] = level
                continue
            foralls[op.results[1]] = len(tiling)
            tiling.append(level)
        elif n == "transform.structured.tile_using_for":
            level = {"kind": "for", "tile_sizes": op.attr("static_sizes")}  # noqa: F841
            interchange = op.attr("static_interchange")
            if interchange:
                level["interchange"] = interchange
            tiling.append(level)
        elif n == "transform.structured.match" and op.attr("ops") is not None and op.attr("op_attrs") is None:
            producers = op.attr("ops")
            if isinstance(producers, tuple) and producers != ("func.func",):
                fused[op.results[0]] = len(fusion)
                fusion.append({"producers": producers, "into": ()})
        elif n == "transform.structured.fuse_into_containing_op":
            j = fused.get(op.operands[0])
            if j is None or op.operands[1] not in foralls:
                raise Unsupported(n, op.line, "a fusion of matched producers into a tiling level's forall")
            fusion[j]["into"] = (*fusion[j]["into"], foralls[op.operands[1]])
            fused[op.results[0]] = j
        elif n == "transform.iree.promote_operands":
            fields["promote_operands"] = op.attr("indices")
            fields["promote_after"] = len(tiling) - 1
        elif n == "transform.iree.convert_to_multi_mma":
            kind = op.attr("intrinsic_kind")
            if not isinstance(kind, Mma):
                raise Unsupported(n, op.line, "an #iree_gpu.mma_layout intrinsic")
            fields["mma"] = MmaChain(intrinsic=kind.intrinsic)
        elif n == "transform.structured.vectorize_children_and_apply_patterns":
            fields["vectorize"] = vectorized = True
        elif n == "transform.apply_registered_pass" and op.attr("pass_name") == "iree-codegen-generic-vectorization":
            fields["vectorize"] = vectorized = True
        elif n == "transform.apply_patterns":
            patterns = [o.name for o in op.body.ops]
            if patterns and all(p in _CLEANUP for p in patterns) and vectorized and not bufferized:
                cleanup.extend(_CLEANUP[p] for p in patterns)
            for inner in op.body.ops:
                if inner.name == "transform.apply_patterns.vector.lower_contraction":
                    lowering["contraction"] = _CONTRACTION.get(inner.attr("lowering_strategy"), "outerproduct")  # type: ignore[arg-type]
                elif inner.name == "transform.apply_patterns.vector.lower_transpose":
                    lowering["transpose"] = _TRANSPOSE.get(inner.attr("lowering_strategy"), "shuffle_1d")  # type: ignore[arg-type]
                elif inner.name == "transform.apply_patterns.vector.lower_transfer":
                    lowering["transfer_max_rank"] = inner.attr("max_transfer_rank")
        elif n == "transform.iree.map_nested_forall_to_gpu_threads":
            fields["gpu"] = GpuThreads(workgroup_dims=op.attr("workgroup_dims"))  # type: ignore[arg-type]
    fields["tiling"] = tuple(
        TileUsingForall.model_validate(t) if t["kind"] == "forall" else TileUsingFor.model_validate(t) for t in tiling
    )
    fields["fusion"] = tuple(Fuse.model_validate(f) for f in fusion)
    if cleanup:
        fields["cleanup"] = tuple(cleanup)
    if lowering:
        fields["vector_lowering"] = VectorLowering.model_validate(lowering)
    try:
        codegen: Codegen = Codegen.model_validate(fields)
        return codegen
    except StrategyError as err:
        raise Unsupported("transform.named_sequence", definition.line, f"a lowering sequence tdsl's Codegen renders ({err})") from None


def codegen_spec(value: Optional[Attr]) -> Optional[str]:
    if isinstance(value, TranslationInfo):
        return value.codegen_spec
    if isinstance(value, Sym):
        return value.name
    return None
