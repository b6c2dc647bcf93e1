"""CPU strategies for the bert example: `auto()` for this machine (IREE data tiling plus the
rules measured to win on its ISA; see tdsl.strategies.cpu.measured).

    tdsl bench examples/models/bert/model.onnx --strategies examples/models/bert/cpu.py
"""

from tdsl.strategies.cpu import auto

strategies = auto()
