"""CPU strategies for the gpt2_block example: `auto()` for this machine (IREE data tiling plus the
rules measured to win on its ISA; see tdsl.strategies.cpu.measured).

    tdsl bench examples/models/gpt2_block/model.onnx --strategies examples/models/gpt2_block/cpu.py
"""

from tdsl.strategies.cpu import auto

strategies = auto()
