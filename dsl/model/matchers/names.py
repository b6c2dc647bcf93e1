"""Matchers on op names and scope: the op's own name, its producer's or single consumer's,
its enclosing function, and whether it is configured yet."""

from __future__ import annotations

from typing import ClassVar, Literal, Optional

from ..base import OperandIndex, OpNames, SymbolName
from ..kinds import LoopShape, MatcherKind


class OpNameMatch(MatcherKind):
    """Matches ops by name. Emits ``transform.match.operation_name %op ["linalg.matmul"]``."""

    template: ClassVar[Optional[str]] = "matchers/op_name.mlir.j2"

    kind: Literal["op_name"] = "op_name"
    """The discriminator: a transform.match.operation_name matcher."""
    names: OpNames
    """Operation names accepted (transform.match.operation_name %op [..]), e.g. linalg.matmul."""

    def loop_count(self) -> Optional[int]:
        return (
            {
                "linalg.matmul": 3,
                "linalg.batch_matmul": 4,
                "linalg.mmt4d": 6,
                "linalg.quantized_matmul": 3,
                "linalg.quantized_batch_matmul": 4,
            }.get(self.names[0])
            if len(self.names) == 1
            else None
        )

    # Named ops with their default indexing maps (a linalg.matmul written with transposed
    # indexing_maps: match it with a contraction matcher and its operand_layout instead).
    _SHAPES: ClassVar[dict[str, LoopShape]] = {
        "linalg.matmul": LoopShape.of(
            ("m", "n", "k"), ((0, 2), (2, 1), (0, 1)), "linalg.matmul's default indexing maps (lhs MxK, rhs KxN)"
        ),
        "linalg.batch_matmul": LoopShape.of(
            ("b", "m", "n", "k"),
            ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
            "linalg.batch_matmul's default indexing maps (lhs BxMxK, rhs BxKxN)",
        ),
        # ONNX QLinearMatMul / MatMulInteger at the graph level: ins(lhs, rhs, lhs zero point,
        # rhs zero point), the lhs, rhs and result indexed as linalg.matmul's / batch_matmul's.
        "linalg.quantized_matmul": LoopShape.of(
            ("m", "n", "k"), ((0, 2), (2, 1), (0, 1)), "linalg.quantized_matmul's indexing maps (lhs MxK, rhs KxN)"
        ),
        "linalg.quantized_batch_matmul": LoopShape.of(
            ("b", "m", "n", "k"),
            ((0, 1, 3), (0, 3, 2), (0, 1, 2)),
            "linalg.quantized_batch_matmul's indexing maps (lhs BxMxK, rhs BxKxN)",
        ),
    }

    def loop_shape(self) -> Optional[LoopShape]:
        shapes = {self._SHAPES.get(n) for n in self.names}
        return shapes.pop() if len(shapes) == 1 else None

    def selects_convolutions(self) -> bool:
        return all(n.startswith(("linalg.conv_", "linalg.depthwise_conv_")) for n in self.names)

    def operand_count(self) -> Optional[int]:
        quantized = ("linalg.quantized_matmul", "linalg.quantized_batch_matmul")
        if all(n in quantized for n in self.names):
            return 5  # lhs, rhs, lhs zero point, rhs zero point, result
        named = (
            "linalg.matmul",
            "linalg.batch_matmul",
            "linalg.mmt4d",
            "linalg.batch_mmt4d",
            "linalg.matvec",
            "linalg.conv_",
        )
        return 3 if all(n.startswith(named) for n in self.names) else None


class NoLoweringConfigMatch(MatcherKind):
    """Requires that the op carries no ``lowering_config`` yet (an earlier rule or spec did
    not configure it). Emits ``transform.iree.match.has_no_lowering_config %op``; IREE's
    default tuning specs start every matcher with it. Combine it in :class:`AllOf`."""

    template: ClassVar[Optional[str]] = "matchers/no_lowering_config.mlir.j2"

    kind: Literal["no_lowering_config"] = "no_lowering_config"
    """The discriminator: emits transform.iree.match.has_no_lowering_config %op."""


class FunctionMatch(MatcherKind):
    """Restricts a rule to ops inside the ``func.func`` named ``function`` (exact symbol).

    At graph level that is the payload function (``@matmul``); at codegen time it is the
    dispatch function IREE generates (``matmul_dispatch_0_matmul_128x192x256_f32``).
    Matcher sequences may only hold match ops, so this is rendered as a scope: the
    rule's ``transform.foreach_match`` runs on
    ``transform.structured.match ops{["func.func", "util.func"]} attributes {sym_name = ".."}``
    (IREE turns payload functions into ``util.func`` before preprocessing).
    Use it inside :class:`AllOf` with a matcher that selects the op.
    """

    template: ClassVar[Optional[str]] = None  # a scope: rendered by the foreach_match, not as match ops

    kind: Literal["function"] = "function"
    """The discriminator: scopes the rule's foreach_match to one function."""
    function: SymbolName
    """sym_name of the func.func / util.func to look in (transform.structured.match attributes)."""


class ConsumerMatch(MatcherKind):
    """Requires the op's first result to have a single user, one of ``names``. Emits
    ``transform.match.structured`` with ``transform.match.structured.result %s[0] single``,
    then ``transform.match.operation_name`` on that user (matcher sequences may only hold
    match ops, so ``get_consumers_of_result`` is not usable here). Use it inside
    :class:`AllOf`, e.g. to select the matmuls whose result is reshaped
    (``tensor.expand_shape``).
    """

    template: ClassVar[Optional[str]] = "matchers/consumer.mlir.j2"

    kind: Literal["consumer"] = "consumer"
    """The discriminator: match.structured.result %s[0] single, then operation_name on its user."""
    names: OpNames
    """Operation names the single user of the op's first result may have, e.g. tensor.expand_shape."""


class ProducerMatch(MatcherKind):
    """Requires operand ``operand`` of the op to be the result of an op named one of
    ``names`` (not a block argument). Emits ``transform.get_operand``,
    ``transform.get_defining_op`` and ``transform.match.operation_name``. Use it inside
    :class:`AllOf`, e.g. to configure an LHS pack only where it is alone in its dispatch
    (its source read from the dispatch's input), not where IREE fused it after a producer
    (an unpack and a GELU), whose loops a pack's tiles do not fit::

        AllOf(matchers=[PackMatch(element_type="f32", inner_dims_pos=[0, 1], inner_tiles=[4, 1]),
                        ProducerMatch(names="iree_tensor_ext.dispatch.tensor.load")])
    """

    template: ClassVar[Optional[str]] = "matchers/producer.mlir.j2"

    kind: Literal["producer"] = "producer"
    """The discriminator: get_operand, get_defining_op, then operation_name on the producer."""
    operand: OperandIndex = 0
    """Index of the operand whose producer is checked (transform.get_operand %op[operand])."""
    names: OpNames
    """Operation names the producer may have, e.g. iree_tensor_ext.dispatch.tensor.load."""
