"""gfx942: the NCHW 1x1 convolution with a quantize/dequantize/add/relu tail.

IREE collapses the 1x1 convolution into a matmul-like linalg.generic and fuses the
elementwise tail into its dispatch: ins(input 64x3136, filter 128x64), loops
(d0 = 128 output channels, d1 = 3136 = 56 x 56 pixels, d2 = 64 input channels). The
contraction's lhs is the input, so M = 3136 (pixels), N = 128 (channels), K = 64, and
the loops are in the order n, m, k. The chooser picks an MFMA configuration that divides 128x3136x64
(no padding) and fits the LDS budget.
"""

from tdsl import AmdGpuTarget, StrategySet
from tdsl.strategies.gpu.chooser import rule_for
from tdsl.strategies.gpu.problems import Contraction

conv1x1 = Contraction(
    batch=(), m=3136, n=128, k=64, lhs_type="f16", rhs_type="f16", output_type="f32", loop_order="nmk"
)

strategies = StrategySet(
    name="conv1x1_gpu",
    targets=[AmdGpuTarget()],
    rules=[rule_for(conv1x1, "conv1x1_mfma")],
)
