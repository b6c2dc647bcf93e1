"""Plans of matcher leaves: the handles, types and checks each leaf's ``leaf`` macro prints.

:func:`plan_matchers` turns a rule's matcher into its matcher sequences (one per concrete
alternative, :func:`tdsl.model.all_of.expand`); :func:`plan_leaf` plans one leaf,
dispatching on the matcher's class. A leaf at position ``j`` of its rule's matcher names
its handles ``%l<j>_...``. A matcher kind without a planner gets a :class:`GenericLeaf`
(the matcher, the chosen alternative and the handle prefix). Emits no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Mapping, Optional

from .. import bindings
from ..model.all_of import AllOf, expand
from ..model.kinds import MatcherKind
from ..model.matchers import (
    AttentionMatch,
    ConsumerMatch,
    ContractionMatch,
    ConvolutionMatch,
    DagMatch,
    OperandMatch,
    OpNameMatch,
    PackMatch,
    ProducerMatch,
    dag_leaf,
)
from ..model.mlir_text import matcher_module, relocated, rename_values
from ..model.raw import RawMatch
from .plan import LeafPlan, MatcherSequence

Choice = Mapping[str, object]
"""One alternative of a leaf (``MatcherKind.alternatives()``): group -> chosen value."""


@dataclass(frozen=True)
class LeafSite:
    """Where a leaf renders: its template, its location and the prefix of its handles (``%l0``)."""

    template: str
    path: str
    prefix: str


@dataclass(frozen=True)
class GenericLeaf(LeafPlan):
    """A leaf of a kind without a planner: ``matcher``, the alternative ``choice`` and the
    handle ``prefix`` its template may use."""

    matcher: MatcherKind
    choice: Choice
    prefix: str


@dataclass(frozen=True)
class OpNameLeaf(LeafPlan):
    """``transform.match.operation_name %op [names]``."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class DimsEqual:
    """``transform.iree.match.dims_equal handle, sizes`` located at the matcher field ``field``."""

    handle: str
    sizes: tuple[int, ...]
    field: str


@dataclass(frozen=True)
class DimBound:
    """``handle = transform.get_operand %op[operand]`` and ``transform.iree.match.dim_bounds
    handle[dim], umin, umax`` (a missing bound prints ``none``), located at ``field``."""

    handle: str
    operand: int
    dim: int
    umin: Optional[int]
    umax: Optional[int]
    field: str


@dataclass(frozen=True)
class ContractionLeaf(LeafPlan):
    """``groups = transform.iree.match.contraction %op, ...`` (one handle per dimension group,
    batch/m/n/k), optional ``indexing_maps`` (each ``(d0, d1, d2) -> (d0, d2)``, printed in
    ``affine_map<..>``), then ``dims_equal`` and ``bounds`` checks."""

    groups: tuple[str, ...]
    lhs_type: str
    rhs_type: str
    output_type: str
    indexing_maps: tuple[str, ...]
    dims_equal: tuple[DimsEqual, ...]
    bounds: tuple[DimBound, ...]


@dataclass(frozen=True)
class ConvolutionLeaf(LeafPlan):
    """``groups = transform.iree.match.convolution %op, ...`` (optional ``indexing_maps``)
    then ``dims_equal`` checks."""

    groups: tuple[str, ...]
    lhs_type: str
    rhs_type: str
    output_type: str
    indexing_maps: tuple[str, ...]
    dims_equal: tuple[DimsEqual, ...]


@dataclass(frozen=True)
class TypeEntry:
    """``name = type`` in a match op's attribute list (``query_type = f16``)."""

    name: str
    type: str


@dataclass(frozen=True)
class AttentionLeaf(LeafPlan):
    """``groups = transform.iree.match.<op> %op, <types>, indexing_maps = [..]`` (batch, m, n,
    k1, k2) then ``dims_equal`` checks."""

    op: str
    groups: tuple[str, ...]
    types: tuple[TypeEntry, ...]
    indexing_maps: tuple[str, ...]
    dims_equal: tuple[DimsEqual, ...]


@dataclass(frozen=True)
class DimCheck:
    """Checks on dimension ``dim`` of an operand, located at ``dims[index]``:
    ``dim_is_multiple_of`` (``multiple_of``) and ``dim_bounds`` (``umin`` / ``umax``; a
    missing bound prints ``none``; no bound at all: no ``dim_bounds``)."""

    index: int
    dim: int
    multiple_of: Optional[int]
    bounded: bool
    umin: Optional[int]
    umax: Optional[int]


@dataclass(frozen=True)
class OperandLeaf(LeafPlan):
    """``handle = transform.<getter> %op[index]`` (``get_operand`` / ``get_result``), then
    ``cast_compatible_type handle = type`` and the ``dims`` checks."""

    handle: str
    getter: str
    index: int
    type: Optional[str]
    dims: tuple[DimCheck, ...]


@dataclass(frozen=True)
class TextLeaf(LeafPlan):
    """A leaf rendered from MLIR the planner prepared (a pattern DAG, a raw matcher): the
    ops as text, every op located at the leaf's path, SSA values prefixed."""

    text: str


@dataclass(frozen=True)
class ConsumerLeaf(LeafPlan):
    """A ``transform.match.structured`` region (block argument ``block_arg``) yielding the
    single user ``user`` of the op's first result into ``consumers``, whose name must be
    one of ``names``."""

    consumers: str
    block_arg: str
    user: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class ProducerLeaf(LeafPlan):
    """Operand ``operand`` of the op into ``value``, its defining op into ``producer``,
    whose name must be one of ``names``."""

    operand: int
    value: str
    producer: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class PackLeaf(LeafPlan):
    """``ins, outs = transform.iree.match.cast_compatible_dag_from_root %op`` with one
    ``linalg.pack`` / ``linalg.unpack`` as the pattern, rendered by the macro ``body``.

    The pattern's block arguments are ``src`` (``src_type``), ``dst`` (``dst_type``) and,
    when the pattern pads, ``pad`` (``element_type``); its op result is ``result``."""

    body: str
    ins: str
    outs: str
    src: str
    dst: str
    pad: Optional[str]
    result: str
    src_type: str
    dst_type: str
    element_type: str
    outer_dims_perm: Optional[tuple[int, ...]]
    inner_dims_pos: tuple[int, ...]
    inner_tiles: tuple[int, ...]


_PACK_BODY = {"pack": "pack_body", "unpack": "unpack_body"}
"""PackMatch.op -> the macro of ``matchers/pack_op.mlir.j2`` that renders the pattern op."""


def _sizes(choice: Choice, group: str) -> Optional[tuple[int, ...]]:
    value = choice[group]
    if value is None:
        return None
    assert isinstance(value, tuple), value
    return tuple(int(v) for v in value)


def _dims_equal(prefix: str, groups: tuple[str, ...], choice: Choice) -> tuple[DimsEqual, ...]:
    checks = []
    for group in groups:
        sizes = _sizes(choice, group)
        if sizes is not None:
            checks.append(DimsEqual(f"{prefix}_{group}", sizes, group))
    return tuple(checks)


@singledispatch
def plan_leaf(matcher: MatcherKind, site: LeafSite, choice: Choice) -> LeafPlan:
    """The plan of one leaf; the default (a kind without a planner) is a :class:`GenericLeaf`."""
    return GenericLeaf(site.template, site.path, matcher, choice, site.prefix)


@plan_leaf.register
def _op_name(matcher: OpNameMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    return OpNameLeaf(site.template, site.path, tuple(matcher.names))


_CONTRACTION_GROUPS = ("batch", "m", "n", "k")


@plan_leaf.register
def _contraction(matcher: ContractionMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    maps: tuple[str, ...] = matcher.layout_maps() or tuple(matcher.maps or ())
    bounds = []
    if matcher.k_min is not None:
        bounds.append(DimBound(f"{p}_lhs", 0, matcher.lhs_k_dim(), matcher.k_min, None, "k_min"))
    if matcher.size_max is not None:
        for i, (operand, dim) in enumerate(matcher.bounded_dims()):
            bounds.append(DimBound(f"{p}_bounded{i}", operand, dim, None, matcher.size_max, "size_max"))
    return ContractionLeaf(
        site.template,
        site.path,
        groups=tuple(f"{p}_{g}" for g in _CONTRACTION_GROUPS),
        lhs_type=matcher.lhs_type,
        rhs_type=matcher.rhs_type,
        output_type=matcher.output_type,
        indexing_maps=maps,
        dims_equal=_dims_equal(p, _CONTRACTION_GROUPS, choice),
        bounds=tuple(bounds),
    )


@plan_leaf.register
def _convolution(matcher: ConvolutionMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    return ConvolutionLeaf(
        site.template,
        site.path,
        groups=tuple(f"{p}_{g}" for g in matcher.GROUPS),
        lhs_type=matcher.lhs_type,
        rhs_type=matcher.rhs_type,
        output_type=matcher.output_type,
        indexing_maps=tuple(matcher.maps or ()),
        dims_equal=_dims_equal(p, matcher.GROUPS, choice),
    )


@plan_leaf.register
def _attention(matcher: AttentionMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    names = ("query_type", "key_type", "value_type", "scale_type", "output_type", "max_type", "sum_type")
    types = tuple(TypeEntry(n, getattr(matcher, n)) for n in names if getattr(matcher, n) is not None)
    return AttentionLeaf(
        site.template,
        site.path,
        op=matcher.op,
        groups=tuple(f"{p}_{g}" for g in matcher.GROUPS),
        types=types,
        indexing_maps=matcher.maps,
        dims_equal=_dims_equal(p, matcher.GROUPS, choice),
    )


@plan_leaf.register
def _operand(matcher: OperandMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    checks = tuple(
        DimCheck(i, d.dim, d.multiple_of, d.min is not None or d.max is not None, d.min, d.max)
        for i, d in enumerate(matcher.dims)
    )
    getter = "get_result" if matcher.result else "get_operand"
    return OperandLeaf(site.template, site.path, f"{site.prefix}_value", getter, matcher.operand, matcher.type, checks)


def located_leaf(ops: str, prefix: str, path: str) -> str:
    """``ops`` (leaf ops on ``%op``) parsed in a matcher sequence and printed back with every
    op located at ``path``, SSA values renamed with ``prefix`` (``%op`` kept)."""
    module = bindings.parse(matcher_module(ops))
    with bindings.context():
        sequence = next(iter(module.body.operations)).operation
        printed = str(sequence.get_asm(enable_debug_info=True))
    lines = printed.split("\n")[1:-2]  # the ops between the header and the final yield
    text = "\n".join("    " + line[2:] for line in lines)
    return rename_values(relocated(text, path), prefix, {"arg0": "op"})


@plan_leaf.register
def _dag(matcher: DagMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    text = located_leaf(dag_leaf(matcher.pattern, "p_", "%op"), site.prefix.lstrip("%") + "_", site.path)
    # The pattern region's terminator, which the printer leaves implicit, written out so that
    # it carries the leaf's location too.
    head, _, closing = text.rpartition("\n")
    return TextLeaf(site.template, site.path, f'{head}\n      transform.yield loc("{site.path}")\n{closing}')


@plan_leaf.register
def _raw(matcher: RawMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    return TextLeaf(site.template, site.path, matcher.inlined(site.prefix.lstrip("%") + "_", site.path))


@plan_leaf.register
def _consumer(matcher: ConsumerMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    return ConsumerLeaf(site.template, site.path, f"{p}_consumers", f"{p}_s", f"{p}_user", tuple(matcher.names))


@plan_leaf.register
def _producer(matcher: ProducerMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    return ProducerLeaf(
        site.template, site.path, matcher.operand, f"{p}_operand", f"{p}_producer", tuple(matcher.names)
    )


@plan_leaf.register
def _pack(matcher: PackMatch, site: LeafSite, choice: Choice) -> LeafPlan:
    p = site.prefix
    src_type, dst_type = matcher.operand_types()
    return PackLeaf(
        site.template,
        site.path,
        body=_PACK_BODY[matcher.op],
        ins=f"{p}_ins",
        outs=f"{p}_outs",
        src=f"{p}_src",
        dst=f"{p}_dst",
        pad=f"{p}_pad" if choice["padding"] else None,
        result=f"{p}_{matcher.op}",
        src_type=src_type,
        dst_type=dst_type,
        element_type=matcher.element_type,
        outer_dims_perm=matcher.outer_dims_perm,
        inner_dims_pos=matcher.inner_dims_pos,
        inner_tiles=matcher.inner_tiles,
    )


def plan_matchers(matcher: MatcherKind, symbol: str, match_path: str) -> tuple[MatcherSequence, ...]:
    """One matcher sequence ``@<symbol>_match<k>`` per concrete alternative of ``matcher``.
    Leaves of an ``AllOf`` are located at ``<match_path>.matchers[j]``."""
    sequences = []
    for k, alternative in enumerate(expand(matcher)):
        leaves = []
        for j, leaf, choice in alternative:
            assert leaf.template is not None
            path = f"{match_path}.matchers[{j}]" if isinstance(matcher, AllOf) else match_path
            leaves.append(plan_leaf(leaf, LeafSite(leaf.template, path, f"%l{j}"), choice))
        sequences.append(MatcherSequence(f"{symbol}_match{k}", tuple(leaves)))
    return tuple(sequences)
