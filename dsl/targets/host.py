"""Facts about the machine tdsl runs on, for ``CpuTarget(cpu="host")``: its ISA (from
/proc/cpuinfo) and its per-core data caches (from sysfs). Emits nothing."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Isa = Literal["avx512", "avx2", "neon", "generic"]
ISA_NAMES: dict[str, str] = {"avx512": "AVX-512", "avx2": "AVX2", "neon": "NEON", "generic": "generic"}
"""How reports spell each :data:`Isa`."""


def detect_isa(cpuinfo: str | None = None) -> Isa:
    """The ISA of this machine (for ``cpu = "host"``), from /proc/cpuinfo flags."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")):
            flags = set(line.split(":", 1)[1].split())
            break
    if "avx512f" in flags:
        return "avx512"
    if "avx2" in flags and "fma" in flags:
        return "avx2"
    if "asimd" in flags or platform.machine() in ("aarch64", "arm64"):
        return "neon"
    return "generic"


@dataclass(frozen=True)
class Caches:
    """Per-core data cache sizes in bytes."""

    l1: int = 32 * 1024
    l2: int = 512 * 1024


def detect_caches(root: str = "/sys/devices/system/cpu/cpu0/cache") -> Caches:
    """L1d and L2 of this machine from sysfs (the defaults where it is not readable)."""
    sizes: dict[int, int] = {}
    for index in sorted(Path(root).glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
        sizes[level] = int(text.rstrip("KM")) * scale
    default = Caches()
    return Caches(l1=sizes.get(1, default.l1), l2=sizes.get(2, default.l2))


# Native vector width in bytes that IREE's llvm-cpu backend assumes per CPU (its
# ``native_vector_size``): 64 with AVX-512, 32 with AVX/AVX2, 16 with SSE or NEON.
_AVX512_CPUS = (
    "skylake-avx512",
    "cascadelake",
    "cooperlake",
    "cannonlake",
    "icelake-client",
    "icelake-server",
    "tigerlake",
    "rocketlake",
    "sapphirerapids",
    "emeraldrapids",
    "graniterapids",
    "graniterapids-d",
    "diamondrapids",
    "znver4",
    "znver5",
    "x86-64-v4",
    "knl",
    "knm",
)
_AVX_CPUS = (
    "sandybridge",
    "ivybridge",
    "haswell",
    "broadwell",
    "skylake",
    "alderlake",
    "raptorlake",
    "meteorlake",
    "arrowlake",
    "arrowlake-s",
    "lunarlake",
    "gracemont",
    "znver1",
    "znver2",
    "znver3",
    "bdver1",
    "bdver2",
    "bdver3",
    "bdver4",
    "btver2",
    "x86-64-v3",
    "corei7-avx",
    "core-avx-i",
    "core-avx2",
)
_SSE_CPUS = ("x86-64", "x86-64-v2", "nehalem", "westmere", "core2", "penryn", "silvermont", "goldmont", "tremont")
_ISA_VECTOR_BYTES = {"avx512": 64, "avx2": 32, "neon": 16}


def native_vector_bytes(cpu: str, features: tuple[str, ...] = ()) -> int | None:
    """The native vector width (bytes) IREE assumes for ``cpu`` with ``features``, or None
    when tdsl does not know the CPU. ``host`` reads this machine's ISA."""
    if cpu == "host":
        return _ISA_VECTOR_BYTES.get(detect_isa())
    if "+avx512f" in features:
        return 64
    if any(f.startswith("-avx") for f in features):
        return None
    if cpu in _AVX512_CPUS:
        return 64
    if cpu in _AVX_CPUS or "+avx2" in features or "+avx" in features:
        return 32
    if cpu in _SSE_CPUS:
        return 16
    return None
