"""The convolution matcher (``transform.iree.match.convolution``)."""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Literal, Optional

from pydantic import model_validator

from ..element_types import ElementType
from ..kinds import MatcherKind
from .dims import AffineMapText, Dims, check_maps, check_sequence_count, dim_alternatives, group_rank, map_dims


class ConvolutionMatch(MatcherKind):
    """Matches convolutions (named or generic). Emits ``transform.iree.match.convolution``
    plus ``transform.iree.match.dims_equal`` per constrained group; ``maps`` (the op's three
    ``indexing_maps``, e.g. ``(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)``
    for the input) pins the layout exactly."""

    template: ClassVar[Optional[str]] = "matchers/convolution.mlir.j2"

    kind: Literal["convolution"] = "convolution"
    """The discriminator: a transform.iree.match.convolution matcher."""
    lhs_type: ElementType
    """Element type of the input (lhs_type of transform.iree.match.convolution)."""
    rhs_type: ElementType
    """Element type of the filter (rhs_type of transform.iree.match.convolution)."""
    output_type: ElementType
    """Element type of the result (output_type of transform.iree.match.convolution)."""
    maps: Optional[tuple[AffineMapText, ...]] = None
    """The op's three indexing_maps exactly (input, filter, output), pinning the layout."""
    batch: Dims = None
    """Batch dim sizes (dims_equal %batch): None any, a list, or one_of lists."""
    output_image: Dims = None
    """Output image dim sizes (dims_equal %output_image): None any, a list, or one_of lists."""
    output_channel: Dims = None
    """Output channel dim sizes (dims_equal %output_channel): None any, a list, or one_of lists."""
    filter: Dims = None
    """Filter loop sizes (dims_equal on the filter group): None any, a list, or one_of lists."""
    input_channel: Dims = None
    """Input channel dim sizes (dims_equal %input_channel): None any, a list, or one_of lists."""
    depth: Dims = None
    """Depth (depthwise channel) dim sizes (dims_equal %depth): None any, a list, or one_of lists."""
    strides: Dims = None
    """Strides (dims_equal %strides): None any, a list, or one_of lists."""
    dilations: Dims = None
    """Dilations (dims_equal %dilations): None any, a list, or one_of lists."""

    GROUPS: ClassVar[tuple[str, ...]] = (
        "batch",
        "output_image",
        "output_channel",
        "filter",
        "input_channel",
        "depth",
        "strides",
        "dilations",
    )

    @model_validator(mode="after")
    def _sequences(self) -> "ConvolutionMatch":
        check_sequence_count(
            [(g, len(dim_alternatives(getattr(self, g)))) for g in self.GROUPS], "one_of alternatives of its groups"
        )
        if self.maps is not None:
            check_maps("maps", self.maps, (3,), "input, filter and output")
        return self

    def sequence_count(self) -> int:
        return math.prod(len(dim_alternatives(getattr(self, g))) for g in self.GROUPS)

    def operand_count(self) -> Optional[int]:
        return 3

    def selects_convolutions(self) -> bool:
        return True

    def convolution_loops(self, igemm: bool) -> Optional[tuple[int, int]]:
        """Without im2col: one loop per dim of batch, output_image, output_channel, filter,
        input_channel and depth; with it (``use_igemm_convolution``), the filter and input
        channel loops become one reduction loop. An open ``depth`` is 0 or 1 dims (the
        depthwise channel of linalg's convolutions)."""
        groups = ["batch", "output_image", "output_channel"] + ([] if igemm else ["filter", "input_channel"])
        ranks = [group_rank(getattr(self, g)) for g in groups]
        if any(r is None for r in ranks):
            return None
        count = sum(r or 0 for r in ranks) + (1 if igemm else 0)
        depth = group_rank(self.depth)
        if depth is None:
            return (count, count + 1) if self.depth is None else None
        return count + depth, count + depth

    def reduction_loops(self, named: bool, count: int) -> Optional[tuple[int, ...]]:
        """The reduction loops of a matched op with ``count`` loops, where the matcher fixes
        them: from ``maps`` (the loops the output map leaves out), or, for ``named`` ops
        (linalg's named convolutions and poolings, whose loops are the parallel ones, then
        the filter and input channel loops), from the ranks of the groups. None where only
        the payload knows (a generic convolution may order its loops otherwise) or where
        the op cannot have ``count`` loops."""
        if self.maps is not None:
            output = map_dims(self.maps[-1])
            if output is None or output[0] != count:
                return None
            return tuple(i for i in range(count) if i not in output[1])
        loops = self.convolution_loops(igemm=False)
        reductions = [group_rank(getattr(self, g)) for g in ("filter", "input_channel")]
        if not named or loops is None or not loops[0] <= count <= loops[1] or any(r is None for r in reductions):
            return None
        reduced = sum(r or 0 for r in reductions)
        return tuple(range(count - reduced, count))

    def alternatives(self) -> list[dict[str, object]]:
        combos = itertools.product(*(dim_alternatives(getattr(self, g)) for g in self.GROUPS))
        return [dict(zip(self.GROUPS, combo)) for combo in combos]
