"""The kind registries: the one list of strategy kinds and the one list of leaf matcher
kinds. The discriminated unions that strategy files are validated against are built from
these lists; adding a kind means adding its class here (and its template).

Raw-MLIR kinds (``raw = True``, :mod:`tdsl.model.raw`) come after the typed ones in the
unions, so errors list the typed kinds first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from .call_replacement import CallReplacement
from .codegen import Codegen
from .kernel_rewrite import KernelRewrite
from .kinds import MatcherKind, StrategyKind
from .layout import DataLayout
from .lowering import CpuLowering, GpuLowering, GraphCpuLowering
from .matchers import (
    AttentionMatch,
    ConsumerMatch,
    ContractionMatch,
    ConvolutionMatch,
    DagMatch,
    FunctionMatch,
    NoLoweringConfigMatch,
    OperandMatch,
    OpNameMatch,
    PackMatch,
    ProducerMatch,
)
from .raw import RawCodegenAction, RawConfig, RawMatch, RawPreprocessingAction, RawTuningAction

RAW_STRATEGY_KINDS: tuple[type[StrategyKind], ...] = (
    RawConfig,
    RawTuningAction,
    RawPreprocessingAction,
    RawCodegenAction,
)
"""The raw-MLIR strategy kinds (what ``tdsl import --allow-raw`` keeps verbatim)."""

STRATEGY_KINDS: tuple[type[StrategyKind], ...] = RAW_STRATEGY_KINDS + (
    DataLayout,
    CpuLowering,
    GraphCpuLowering,
    GpuLowering,
    KernelRewrite,
    CallReplacement,
    Codegen,
)
"""Every strategy kind (errors list the typed ones first, then the raw ones)."""

LEAF_MATCHER_KINDS: tuple[type[MatcherKind], ...] = (
    OpNameMatch,
    ContractionMatch,
    ConvolutionMatch,
    FunctionMatch,
    ConsumerMatch,
    ProducerMatch,
    PackMatch,
    AttentionMatch,
    NoLoweringConfigMatch,
    OperandMatch,
    DagMatch,
    RawMatch,
)
"""Every matcher kind that :class:`tdsl.model.all_of.AllOf` can combine."""


def _typed_first(kinds: tuple[type[StrategyKind], ...]) -> tuple[type[StrategyKind], ...]:
    return tuple(k for k in kinds if not k.raw) + tuple(k for k in kinds if k.raw)


if TYPE_CHECKING:
    Strategy = StrategyKind
    LeafMatcher = MatcherKind
else:
    Strategy = Annotated[Union[_typed_first(STRATEGY_KINDS)], Field(discriminator="kind")]
    LeafMatcher = Annotated[Union[LEAF_MATCHER_KINDS], Field(discriminator="kind")]
