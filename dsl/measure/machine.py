"""What every machine-readable report carries: its schema version, the versions of tdsl and
IREE, and the machine (CPU model, ISA from /proc/cpuinfo, cores)."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TypedDict

from ..targets.host import detect_isa

SCHEMA_VERSION = 1
"""Version of the JSON that ``tdsl compile/run/bench --json`` print; it goes up when a field
changes meaning or disappears (new fields do not change it)."""


class Machine(TypedDict):
    """The machine a report was made on: CPU model, ISA (``avx512``, ``avx2``, ``neon``,
    ``generic``), cores (None: unknown)."""

    cpu: str
    isa: str
    cores: int | None


class JsonHeader(TypedDict):
    """The fields every ``--json`` output starts with."""

    schema_version: int
    tdsl_version: str
    iree_version: str
    machine: Machine


ISA_NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "neon": "NEON", "generic": "generic"}


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def versions() -> dict[str, str]:
    """{package: version} of tdsl and the IREE wheels it drives."""
    return {name: _version(name) for name in ("tdsl", "iree-base-compiler", "iree-base-runtime")}


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, else the CPU count): what
    ``--threads all`` means."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine() -> Machine:
    """The machine: CPU model, ISA (``avx512``, ``avx2``, ``neon``, ``generic``), cores."""
    return {"cpu": cpu_model(), "isa": detect_isa(), "cores": os.cpu_count()}


def json_header() -> JsonHeader:
    """The fields every ``--json`` output starts with."""
    found = versions()
    return {
        "schema_version": SCHEMA_VERSION,
        "tdsl_version": found["tdsl"],
        "iree_version": found["iree-base-compiler"],
        "machine": machine(),
    }
