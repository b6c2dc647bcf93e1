"""CPU: tdsl.strategies.cpu.auto() packs every matmul of the payload into mmt4d form.

The ISA is pinned here so that the rendered script (and its golden) is the same on every
machine; ``auto()`` without ``isa`` reads it from /proc/cpuinfo. AVX2 tiles run correctly
on AVX-512 machines too.
"""

from tdsl.strategies.cpu import auto

strategies = auto(isa="avx2")
