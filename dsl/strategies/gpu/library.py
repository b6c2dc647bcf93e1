"""The gfx942 strategy library: chosen MFMA configurations for common contractions.

``standard_set(problems)`` builds a StrategySet with one chooser rule per named problem;
``REFERENCE_PROBLEMS`` are the shapes the library is checked on (resource report next to
IREE's default configuration, see tests/strategies/test_gpu_library.py).
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

from ...sets.strategy_set import StrategySet
from ...targets import AmdGpuTarget
from .chooser import conv_rule_for, rules_for
from .problems import Contraction, Convolution, Convolution2d

REFERENCE_PROBLEMS: tuple[tuple[str, Contraction], ...] = (
    ("mm_f16", Contraction((), 1024, 2048, 512, "f16", "f16", "f32")),
    ("mm_bf16", Contraction((), 512, 1024, 512, "bf16", "bf16", "f32")),
    ("mm_i8", Contraction((), 512, 512, 1024, "i8", "i8", "i32")),
    ("mm_f32", Contraction((), 256, 256, 256, "f32", "f32", "f32")),
    ("bmm_f16", Contraction((8,), 512, 512, 256, "f16", "f16", "f32")),
)


REFERENCE_CONVOLUTIONS: tuple[tuple[str, Convolution2d], ...] = (
    ("conv_nhwc_f16", Convolution2d(2, 32, 32, 128, 3, 3, 64, "f16", "f16", "f32", "nhwc")),
    ("conv_nchw_f16", Convolution2d(2, 32, 32, 64, 3, 3, 32, "f16", "f16", "f32", "nchw")),
)


def convolution_set(
    problems: Optional[Sequence[tuple[str, Union[Convolution, Convolution2d]]]] = None,
    name: str = "gfx942_convolutions",
) -> StrategySet:
    """A StrategySet for gfx942 with one implicit-GEMM configuration per named convolution
    (default: :data:`REFERENCE_CONVOLUTIONS`)."""
    chosen = REFERENCE_CONVOLUTIONS if problems is None else problems
    return StrategySet(name=name, targets=[AmdGpuTarget()], rules=[conv_rule_for(p, n) for n, p in chosen])


def standard_set(
    problems: Optional[Sequence[tuple[str, Contraction]]] = None, name: str = "gfx942_library"
) -> StrategySet:
    """A StrategySet for gfx942 with one chosen configuration per named problem (default:
    :data:`REFERENCE_PROBLEMS`)."""
    return StrategySet(
        name=name, targets=[AmdGpuTarget()], rules=rules_for(REFERENCE_PROBLEMS if problems is None else problems)
    )
