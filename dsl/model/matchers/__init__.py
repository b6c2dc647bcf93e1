"""Matchers: which payload ops a rule applies to (one module per family of matchers).

Each matcher renders to the body of a ``transform.named_sequence`` matcher used by
``transform.foreach_match``: ``transform.match.operation_name``,
``transform.iree.match.contraction`` / ``convolution`` followed by
``transform.iree.match.dims_equal``, or a function-name check. A dimension group is
``None`` (any size), one exact list of sizes, or a set of such lists (``one_of``);
sets are expanded into one matcher sequence per alternative, all tried in order.

Note the op forms at codegen time: on gfx942 every contraction and convolution is
already a ``linalg.generic`` (match it with ``contraction`` / ``convolution``), and
on llvm-cpu convolutions are generics too.

Example::

    ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", m=1024, n=1024, k=1024)

renders (inside the matcher sequence)::

    %batch, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32,
        output_type = f32 : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %batch, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [1024] : !transform.param<i64>
    ...
"""

from ..element_types import ElementType
from .attention import AttentionMatch
from .contraction import ContractionMatch, OperandLayout, contraction_with_layout, maps_loop_shape
from .convolution import ConvolutionMatch
from .dag import DagMatch, PackMatch, dag_leaf
from .dims import MAX_SEQUENCES, AffineMapText, Dims, TensorTypeText, check_sequence_count, map_dims
from .names import ConsumerMatch, FunctionMatch, NoLoweringConfigMatch, OpNameMatch, ProducerMatch
from .operands import DimConstraint, OperandMatch

__all__ = [
    "MAX_SEQUENCES",
    "AffineMapText",
    "AttentionMatch",
    "ConsumerMatch",
    "ContractionMatch",
    "ConvolutionMatch",
    "DagMatch",
    "DimConstraint",
    "Dims",
    "ElementType",
    "FunctionMatch",
    "NoLoweringConfigMatch",
    "OpNameMatch",
    "OperandLayout",
    "OperandMatch",
    "PackMatch",
    "ProducerMatch",
    "TensorTypeText",
    "check_sequence_count",
    "contraction_with_layout",
    "dag_leaf",
    "map_dims",
    "maps_loop_shape",
]
