"""gfx942 strategy library (MFMA configurations, full TD strategy) and its chooser.

The chooser (:mod:`tdsl.strategies.gpu.chooser`) turns a problem into a ``GpuLowering``
(TileAndFuse with an MFMA intrinsic), ranking tilings with a documented cost model. A
problem is one of these frozen dataclasses, exported here:

* :class:`Contraction` -- ``Contraction(batch, m, n, k, lhs_type, rhs_type, output_type,
  loop_order="mnk")``: a matmul-like op with its batch sizes (``()`` for none), M, N, K (an
  int, or a tuple of loop sizes for a multi-loop group: ``m=(16, 16)``), element types
  (``"f16", "f16", "f32"``) and the roles of its loops (``"mnk"``; ``"nmk"``, ``"nmmk"``,
  ``"bmnk"`` etc. for other orders). ``.match()`` gives the ContractionMatch that selects
  exactly it (with its ``loop_order``).
* :class:`Convolution` -- ``Convolution(batch, output_image, output_channel, filter,
  input_channel, lhs_type, rhs_type, output_type, loop_order, depth=(), strides=(),
  dilations=())``: any convolution as codegen sees it (the unit batch dropped, any layout,
  strides and dilations), its loops spelled as ``tdsl ops`` prints them (``"foocww"``).
  ``.match()`` gives its ConvolutionMatch.
* :class:`Convolution2d` -- ``Convolution2d(batch, oh, ow, oc, kh, kw, ic, lhs_type,
  rhs_type, output_type, layout="nhwc")``: the 2-D shorthand (one batch loop, unit strides).

``choose(problem, name)`` (or ``choose_contraction`` / ``choose_convolution``) returns the
configuration; ``rule_for`` / ``conv_rule_for`` wrap it in a gfx942 Rule, and
``library.standard_set`` / ``library.convolution_set`` build sets of them. ``estimate``
gives the cost model's view of any tiling of a problem's :class:`Gemm` (IREE's default
configurations too). For example::

    from tdsl.strategies.gpu import Contraction, rule_for
    rule = rule_for(Contraction((), 4096, 4096, 4096, "f16", "f16", "f32"), "mm_4k")
"""

from .chooser import (
    Estimate,
    Tiling,
    choose,
    choose_contraction,
    choose_convolution,
    choose_intrinsic,
    conv_rule_for,
    estimate,
    rule_for,
    rules_for,
)
from .problems import Contraction, Convolution, Convolution2d, Gemm

__all__ = [
    "Contraction",
    "Convolution",
    "Convolution2d",
    "Estimate",
    "Gemm",
    "Tiling",
    "choose",
    "choose_contraction",
    "choose_convolution",
    "choose_intrinsic",
    "conv_rule_for",
    "estimate",
    "rule_for",
    "rules_for",
]
