"""CPU strategies for the resnet example: `auto()` with IREE's im2col rewrite of every
convolution, which this model's NCHW convs (as PyTorch/ONNX export them) measured 2.2x
faster than IREE's data tiling on AVX-512 (0.706 vs 1.563 ms, 1 thread); on an NHWC
56x56x64 conv the same flag measured 0.53x, so auto() does not turn it on by itself.

    tdsl bench examples/models/resnet/model.onnx --strategies examples/models/resnet/cpu.py
"""

from tdsl.strategies.cpu import auto

strategies = auto(im2col_convs=True)
