"""CPU strategies for the bert example as a user combines them: the exported head-split
fusion (``head_transpose_fusion``: matmul -> bias add -> reshape -> transpose in one
dispatch) ahead of ``auto()`` (IREE data tiling plus the rules measured to win on the ISA).

The fusion applies only where it measured a win (``tdsl.strategies.cpu.fusion.HEAD_FUSION``):
on AVX-512 with data tiling it did not (python benchmarks/head_split.py), so there this set
is auto()'s. Opt in per layout to try it, e.g. ``head_transpose_fusion(layouts=["hds"])``.

    tdsl bench examples/models/bert/model.onnx --strategies examples/models/bert/strategy.py \\
        --repetitions 7 --min-time 0.2 --no-numpy
"""

from tdsl import combine
from tdsl.strategies.cpu import auto, head_transpose_fusion

# data_tiling=True (the default) as auto() builds on AVX-512; on an ISA without measured
# choices head_transpose_fusion() chooses no layout either way.
strategies = combine(head_transpose_fusion(), auto(), name="bert")
