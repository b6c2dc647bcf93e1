"""tdsl: declarative Python strategies rendered to verified IREE transform-dialect scripts.

Author a :class:`StrategySet` of rules (matcher -> strategy -> target), then
:func:`render` it for a target to get verified scripts and the ``iree-compile`` flags
that inject them.
"""

from __future__ import annotations

from .codegen import Codegen, Fuse, GpuThreads, MmaChain, TileUsingFor, TileUsingForall, VectorLowering
from .errors import RenderError, StrategyError, StrategyFileError, TdslError
from .layout import DataLayout, Pack, PackGreedily, PackTranspose
from .lowering import CpuLowering, GpuLowering
from .matchers import AllOf, ConsumerMatch, ContractionMatch, ConvolutionMatch, FunctionMatch, OpNameMatch, PackMatch
from .render import Rendered, Script, render
from .strategy_set import Rule, Strategy, StrategySet
from .targets import GFX942, AmdGpuTarget, CpuTarget

__all__ = [
    "GFX942",
    "AllOf",
    "AmdGpuTarget",
    "Codegen",
    "ContractionMatch",
    "ConvolutionMatch",
    "CpuLowering",
    "CpuTarget",
    "DataLayout",
    "FunctionMatch",
    "Fuse",
    "GpuLowering",
    "GpuThreads",
    "MmaChain",
    "OpNameMatch",
    "ConsumerMatch",
    "PackMatch",
    "Pack",
    "PackGreedily",
    "PackTranspose",
    "RenderError",
    "Rendered",
    "Rule",
    "Script",
    "Strategy",
    "StrategyError",
    "StrategyFileError",
    "StrategySet",
    "TdslError",
    "TileUsingFor",
    "TileUsingForall",
    "VectorLowering",
    "render",
]
