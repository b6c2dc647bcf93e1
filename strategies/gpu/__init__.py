"""gfx942 strategy library (MFMA configurations, full TD strategy) and its chooser.

The chooser (:mod:`tdsl.strategies.gpu.chooser`) turns a problem into a ``GpuLowering``.
A problem is one of two frozen dataclasses, exported here:

* :class:`Contraction` -- ``Contraction(batch, m, n, k, lhs_type, rhs_type, output_type,
  loop_order="mnk")``: a matmul-like op with its batch sizes (``()`` for none), M, N, K,
  element types (``"f16", "f16", "f32"``) and the order of its m/n/k loops (``"mnk"``;
  ``"mkn"`` etc. for other iteration orders). ``.match()`` gives the ContractionMatch that
  selects exactly it.
* :class:`Convolution2d` -- ``Convolution2d(batch, oh, ow, oc, kh, kw, ic, lhs_type,
  rhs_type, output_type, layout="nhwc")``: a 2-D convolution as IREE's implicit GEMM sees
  it (stride and dilation folded into the output sizes ``oh``/``ow``). ``.match()`` gives
  its ConvolutionMatch.

``choose_contraction(problem, name)`` / ``choose_convolution(problem, name)`` return the
configuration; ``rule_for`` / ``conv_rule_for`` wrap it in a gfx942 Rule, and
``library.standard_set`` / ``library.convolution_set`` build sets of them. For example::

    from tdsl.strategies.gpu import Contraction, rule_for
    rule = rule_for(Contraction((), 4096, 4096, 4096, "f16", "f16", "f32"), "mm_4k")
"""

from .chooser import (
    Contraction,
    Convolution2d,
    choose_contraction,
    choose_convolution,
    choose_intrinsic,
    conv_rule_for,
    rule_for,
    rules_for,
)

__all__ = [
    "Contraction",
    "Convolution2d",
    "choose_contraction",
    "choose_convolution",
    "choose_intrinsic",
    "conv_rule_for",
    "rule_for",
    "rules_for",
]
