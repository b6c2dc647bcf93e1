"""CPU: tdsl.strategies.cpu.auto(pack_matmuls=True) packs every matmul of the payload into
mmt4d form (the opt-in graph-level packing; plain ``auto()`` leaves matmuls to IREE's data
tiling where packing did not measure a win, see tdsl.strategies.cpu.measured).

The ISA and the cache sizes are pinned here so that the rendered scripts (and their
goldens) are the same on every machine; ``auto()`` without them reads /proc/cpuinfo and
sysfs. AVX2 tiles run correctly on AVX-512 machines too. The payload's matmuls are small
(so that the example runs in seconds); ``small_max=None`` packs them anyway (by default,
matmuls with every dim <= 256 stay with IREE's default pipeline, which is faster there).
"""

from tdsl.strategies.cpu import Caches, auto

strategies = auto(isa="avx2", pack_matmuls=True, caches=Caches(l1=32 * 1024, l2=512 * 1024), small_max=None)
