"""Facts about the machine tdsl runs on, for ``CpuTarget(cpu="host")``: its ISA (from
/proc/cpuinfo) and its per-core data caches (from sysfs). Emits nothing."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Isa = Literal["avx512", "avx2", "neon", "generic"]


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
