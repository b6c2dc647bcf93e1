"""The kind registries: the one list of strategy kinds and the one list of leaf matcher
kinds. The discriminated unions that strategy files are validated against are built from
these lists; adding a kind means adding its class here (and its template).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from .codegen import Codegen
from .kinds import MatcherKind, StrategyKind
from .layout import DataLayout
from .lowering import CpuLowering, GpuLowering
from .matchers import ConsumerMatch, ContractionMatch, ConvolutionMatch, FunctionMatch, OpNameMatch, PackMatch

STRATEGY_KINDS: tuple[type[StrategyKind], ...] = (DataLayout, CpuLowering, GpuLowering, Codegen)
"""Every strategy kind, in the order errors list them."""

LEAF_MATCHER_KINDS: tuple[type[MatcherKind], ...] = (
    OpNameMatch,
    ContractionMatch,
    ConvolutionMatch,
    FunctionMatch,
    ConsumerMatch,
    PackMatch,
)
"""Every matcher kind that :class:`tdsl.spec.all_of.AllOf` can combine."""

if TYPE_CHECKING:
    Strategy = StrategyKind
    LeafMatcher = MatcherKind
else:
    Strategy = Annotated[Union[STRATEGY_KINDS], Field(discriminator="kind")]
    LeafMatcher = Annotated[Union[LEAF_MATCHER_KINDS], Field(discriminator="kind")]
