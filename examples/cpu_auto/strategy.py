"""CPU: tdsl.strategies.cpu.auto() packs every matmul of the payload into mmt4d form."""

from tdsl.strategies.cpu import auto

strategies = auto()
