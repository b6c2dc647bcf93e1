"""Structured (``linalg``) ops as codegen and the graph level see them: each op's name,
function, location, operand types, loops, iterator kinds and contraction / convolution roles,
read with the bindings before and after ``linalg-generalize-named-ops``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import TdslError
from . import TensorType, _ir, _named_attributes, _value, context
from .attributes import AttrValue


@dataclass(frozen=True)
class LinalgOp:
    """A ``linalg`` op of a module: its name as written, enclosing function, location key,
    operand types (ins then outs), loop sizes and iterator kinds (from the op generalized),
    the loops of each contraction / convolution role (``roles``, from linalg's own
    inference; empty for other ops), its strides and dilations (convolutions) and its
    attribute values."""

    name: str
    function: str | None
    location: str
    operands: tuple[TensorType, ...]
    loop_sizes: tuple[int, ...]
    iterators: tuple[str, ...]
    kind: str  # "contraction", "convolution" or "other"
    roles: dict[str, tuple[int, ...]]
    strides: tuple[int, ...] = ()
    dilations: tuple[int, ...] = ()
    values: dict[str, AttrValue] = field(default_factory=dict)
    zero_points: tuple[str, ...] = ()
    """Types of the scalar zero-point inputs of a contraction with zero points
    (``linalg.quantized_matmul``: ``("i32", "i32")``), empty for other ops."""
    maps: tuple[str, ...] = ()
    """The indexing maps of the op generalized, printed without ``affine_map<>`` (e.g.
    ``(d0, d1, d2) -> (d0, d2)``), one per operand; empty when it has none."""
    body: tuple[str, ...] = ()
    """The names of the ops in the body of the op generalized (``arith.mulf``,
    ``arith.addf``; the yield left out): what one point of its loops computes."""

    def sizes(self, role: str) -> tuple[int, ...]:
        """The loop sizes of ``role`` (``m``, ``batch``, ``output_image``, ...)."""
        return tuple(self.loop_sizes[d] for d in self.roles.get(role, ()))


def location_key(location: Any) -> str:
    """The innermost source location of ``location`` (the callee of a call site), printed:
    what a graph-level op and the dispatch op it became have in common."""
    while hasattr(location, "callee"):
        try:
            location = location.callee
        except (ValueError, TypeError):
            break
    return str(location)


def _shaped(t: Any) -> TensorType | None:
    ir = _ir()
    if not isinstance(t, ir.ShapedType):
        try:
            t = ir.ShapedType(t)
        except ValueError:
            return None
    if not t.has_rank:
        return None
    shape = tuple(-1 if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(t.rank))
    return TensorType(shape, str(t.element_type))


_INDEX = "tdsl.op_index"

ZERO_POINT_CONTRACTIONS = ("linalg.quantized_matmul", "linalg.quantized_batch_matmul")
"""Contractions with two scalar zero-point inputs after lhs and rhs (``ins(lhs, rhs,
lhs_zero_point, rhs_zero_point)``). linalg's contraction check (and so
``transform.iree.match.contraction``) refuses them: it wants exactly two inputs."""


def _zero_point_roles(op: Any) -> dict[str, tuple[int, ...]] | None:
    """Loop roles of a generalized contraction with zero points, from the indexing maps of
    its lhs, rhs and result (the zero points' maps have no results); None when they do not
    classify as a contraction."""
    ir = _ir()
    from iree.compiler.dialects import linalg

    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if len(maps) != 5 or any(len(m.results) for m in maps[2:4]):
        return None
    dims = linalg.infer_contraction_dimensions_from_maps([maps[0], maps[1], maps[4]])
    if dims is None or not list(dims.k):
        return None
    return {r: tuple(int(d) for d in getattr(dims, r)) for r in ("batch", "m", "n", "k")}


Roles = dict[str, tuple[int, ...]]
"""Loop dims per contraction / convolution role."""


def _classify(op: Any) -> tuple[str, Roles, tuple[tuple[int, ...], tuple[int, ...]]]:
    """(kind, roles, (strides, dilations)) of a linalg op: ``contraction``,
    ``convolution`` or ``other`` (no roles)."""
    from iree.compiler.dialects import linalg

    # linalg's isa_* checks can accept an op whose dimensions its infer_* then cannot
    # name (None; seen on a dynamically quantized ViT's integer ops): such an op is "other"
    contraction = linalg.infer_contraction_dimensions(op) if linalg.isa_contraction_op(op) else None
    convolution = (
        linalg.infer_convolution_dimensions(op) if contraction is None and linalg.isa_convolution_op(op) else None
    )
    if contraction is not None:
        return (
            "contraction",
            {r: tuple(int(d) for d in getattr(contraction, r)) for r in ("batch", "m", "n", "k")},
            ((), ()),
        )
    if convolution is not None:
        groups = ("batch", "output_image", "output_channel", "filter_loop", "input_channel", "depth")
        roles = {r: tuple(int(d) for d in getattr(convolution, r)) for r in groups}
        return (
            "convolution",
            roles,
            (tuple(int(s) for s in convolution.strides), tuple(int(s) for s in convolution.dilations)),
        )
    return "other", {}, ((), ())


def _loops(op: Any, typed: list[TensorType | None]) -> tuple[list[int], tuple[str, ...], tuple[str, ...]]:
    """(loop sizes (-1: unknown), iterator kinds, printed indexing maps) of a generic op whose
    operands have the tensor types ``typed``; all empty for an op without maps."""
    ir = _ir()
    if "indexing_maps" not in op.attributes or "iterator_types" not in op.attributes:
        return [], (), ()
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = tuple(str(t).split("<")[-1].rstrip(">") for t in ir.ArrayAttr(op.attributes["iterator_types"]))
    sizes = [-1] * len(iterators)
    for amap, operand in zip(maps, typed):
        if operand is None:
            continue
        for position, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr):
                dim = expr.position
                if sizes[dim] < 0 and position < len(operand.shape):
                    sizes[dim] = operand.shape[position]
    return sizes, iterators, tuple(str(m) for m in maps)


def _body(op: Any) -> tuple[str, ...]:
    """The names of the ops in ``op``'s body, its yield left out."""
    return tuple(
        child.operation.name
        for region in op.regions
        for block in region.blocks
        for child in block.operations
        if child.operation.name != "linalg.yield"
    )


_SKIPPED = {"linalg.fill", "linalg.yield", "linalg.index"}


def _collect(module: Any, every: bool = False) -> list[tuple[Any, str | None]]:
    """The ``linalg`` ops of ``module`` in pre-order with their enclosing function's name;
    fills, yields and indices left out unless ``every``."""
    found: list[tuple[Any, str | None]] = []

    def visit(op: Any, function: str | None) -> None:
        if op.name in ("func.func", "util.func"):
            symbol = _value(op.attributes["sym_name"]) if "sym_name" in op.attributes else None
            function = symbol if isinstance(symbol, str) else function
        if op.name.startswith("linalg.") and (every or op.name not in _SKIPPED):
            found.append((op, function))
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    visit(child.operation, function)

    visit(module.operation, None)
    return found


def linalg_ops(text: str) -> list[LinalgOp]:
    """Every ``linalg`` compute op of the module in ``text`` (pre-order; fills, yields and
    indices left out), read before and after ``linalg-generalize-named-ops`` so that named
    ops get their loop sizes and iterator kinds too."""
    ir = _ir()
    from iree.compiler import passmanager

    with context():
        module = ir.Module.parse(text)
        classified = [_classify(op) for op, _ in _collect(module)]
        kinds = [kind for kind, _, _ in classified]
        roles = [role for _, role, _ in classified]
        convs = [conv for _, _, conv in classified]
        named = [
            (
                op.name,
                function,
                location_key(op.location),
                kind,
                {key: _value(attr) for key, attr in _named_attributes(op)},
            )
            for (op, function), kind in zip(_collect(module), kinds)
        ]
        for index, (op, _) in enumerate(_collect(module)):
            op.attributes[_INDEX] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), index)
        passmanager.PassManager.parse("builtin.module(linalg-generalize-named-ops)").run(module.operation)
        generic: list[Any] = [None] * len(named)
        for op, _ in _collect(module, every=True):
            if _INDEX in op.attributes:
                generic[int(op.attributes[_INDEX].value)] = op
        if any(op is None for op in generic):
            raise TdslError("linalg_ops: an op lost its identity in linalg-generalize-named-ops")
        ops = []
        for (name, function, location, kind, values), op, role, (strides, dilations) in zip(
            named, generic, roles, convs
        ):
            typed = [_shaped(v.type) for v in op.operands]
            operands = tuple(t for t in typed if t is not None)
            zero_points: tuple[str, ...] = ()
            sizes, iterators, printed = _loops(op, typed)
            if printed and name in ZERO_POINT_CONTRACTIONS and kind == "other":
                found = _zero_point_roles(op)
                if found is not None and len(typed) == 5:
                    kind, role = "contraction", found
                    zero_points = tuple(str(v.type) for v in list(op.operands)[2:4])
                    operands = tuple(t for t in (typed[0], typed[1], typed[4]) if t is not None)
            ops.append(
                LinalgOp(
                    name,
                    function,
                    location,
                    operands,
                    tuple(sizes),
                    iterators,
                    kind,
                    role,
                    strides,
                    dilations,
                    values,
                    zero_points,
                    printed,
                    _body(op),
                )
            )
    return ops
