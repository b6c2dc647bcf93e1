"""This machine's roofline: its f32 FMA peak and read bandwidth from memory at a thread
count (:mod:`tdsl.measure.probes`), measured once per machine and thread count and kept in
``roofline.json`` in the user cache (:func:`tdsl.files.cache_root`, beside the tuning
store), keyed by CPU model, ISA, cores and threads.

A cache file that cannot be read or is not a roofline cache, or that cannot be written, is
a one-line note on the result: the roofline is then measured now (and rewritten where it
can be).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from ..files import atomic_write, cache_root
from .machine import ISA_NAMES, machine
from .probes import measure_bandwidth, measure_peak

CACHE_FILE = "roofline.json"
CACHE_FORMAT = 1
MEASURED_NOW = "measured now"


class RooflineJson(TypedDict):
    """A roofline as ``--json`` prints it."""

    cpu: str
    isa: str
    cores: int | None
    threads: int
    peak_gflops: float
    bandwidth_gb_s: float
    peak_method: str
    bandwidth_method: str
    source: str
    notes: list[str]


@dataclass(frozen=True)
class Roofline:
    """The roofline of ``threads`` cores of this machine: f32 FMA peak (GFLOP/s), read
    bandwidth from memory (GB/s), how each was measured and where the figures came from
    (:data:`MEASURED_NOW` or ``cached at PATH``)."""

    cpu: str
    isa: str
    cores: int | None
    threads: int
    peak_gflops: float
    bandwidth_gb_s: float
    peak_method: str
    bandwidth_method: str
    source: str
    notes: tuple[str, ...] = ()

    def footer(self) -> str:
        """One line: the machine, the thread count, the peak and bandwidth, their source."""
        threads = f"{self.threads} thread{'s' if self.threads > 1 else ''}"
        return (
            f"roofline of {self.cpu}, {ISA_NAMES.get(self.isa, self.isa)}, {self.cores or '?'} cores, {threads}: "
            f"f32 peak {self.peak_gflops:.1f} GFLOP/s, read bandwidth {self.bandwidth_gb_s:.1f} GB/s; {self.source}"
        )

    def methods(self) -> str:
        """One line: how the peak and the bandwidth were measured."""
        return f"(peak: {self.peak_method}; bandwidth: {self.bandwidth_method})"

    def to_json(self) -> RooflineJson:
        return {
            "cpu": self.cpu,
            "isa": self.isa,
            "cores": self.cores,
            "threads": self.threads,
            "peak_gflops": self.peak_gflops,
            "bandwidth_gb_s": self.bandwidth_gb_s,
            "peak_method": self.peak_method,
            "bandwidth_method": self.bandwidth_method,
            "source": self.source,
            "notes": list(self.notes),
        }


def default_cache() -> Path:
    """``roofline.json`` in the user cache directory."""
    return cache_root() / CACHE_FILE


def _key(cpu: str, isa: str, cores: int | None, threads: int) -> str:
    return json.dumps([cpu, isa, cores, threads])


def _read(path: Path) -> tuple[dict[str, dict[str, object]], str]:
    """The cache's entries, or none and a one-line note (a file that cannot be read or is
    not a roofline cache). A missing file is an empty cache."""
    try:
        text = path.read_text()
    except (FileNotFoundError, NotADirectoryError):  # no cache yet (or none can be made there)
        return {}, ""
    except (OSError, UnicodeDecodeError) as err:
        return {}, f"roofline cache {path} could not be read ({err}); measured now"
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    entries = data.get("rooflines") if isinstance(data, dict) and data.get("format") == CACHE_FORMAT else None
    if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
        return (
            {},
            f"roofline cache {path}: expected tdsl's roofline JSON (format {CACHE_FORMAT}), received something else; measured again",
        )
    return entries, ""


def _cached(entry: dict[str, object] | None) -> tuple[float, float, str, str] | None:
    """(peak, bandwidth, peak method, bandwidth method) of a cache entry, or None where it
    is missing or not one."""
    if entry is None:
        return None
    peak, bandwidth = entry.get("peak_gflops"), entry.get("bandwidth_gb_s")
    methods = entry.get("peak_method"), entry.get("bandwidth_method")
    if not (isinstance(peak, (int, float)) and isinstance(bandwidth, (int, float)) and peak > 0 and bandwidth > 0):
        return None
    if not all(isinstance(m, str) for m in methods):
        return None
    return float(peak), float(bandwidth), str(methods[0]), str(methods[1])


def machine_roofline(threads: int, cache: Path | None = None, remeasure: bool = False) -> Roofline:
    """The roofline of ``threads`` cores of this machine: from ``cache`` (default
    :func:`default_cache`) where it holds one for this CPU model, ISA, core count and
    thread count (unless ``remeasure``), else measured now and written there. Raises
    :class:`~tdsl.errors.BenchFailed` (one line) where no probe can measure."""
    if threads < 1:
        raise ValueError(f"threads: expected at least 1, received {threads}")
    path = cache if cache is not None else default_cache()
    here = machine()
    key = _key(here["cpu"], here["isa"], here["cores"], threads)
    entries, note = _read(path)
    found = None if remeasure else _cached(entries.get(key))
    notes = [note] if note else []
    if found is not None:
        peak, bandwidth, peak_method, bandwidth_method = found
        return Roofline(
            here["cpu"], here["isa"], here["cores"], threads, peak, bandwidth, peak_method, bandwidth_method,
            f"cached at {path}", tuple(notes),
        )  # fmt: skip
    probed_peak, probed_bandwidth = measure_peak(threads), measure_bandwidth(threads)
    notes += [*probed_peak.notes, *probed_bandwidth.notes]
    entries[key] = {
        "cpu": here["cpu"],
        "isa": here["isa"],
        "cores": here["cores"],
        "threads": threads,
        "peak_gflops": probed_peak.rate,
        "bandwidth_gb_s": probed_bandwidth.rate,
        "peak_method": probed_peak.method,
        "bandwidth_method": probed_bandwidth.method,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    source = f"{MEASURED_NOW}, cached at {path}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"format": CACHE_FORMAT, "rooflines": entries}, indent=1) + "\n")
    except OSError as err:
        source = MEASURED_NOW
        notes.append(f"roofline not cached: {path} could not be written ({err.strerror or err})")
    return Roofline(
        here["cpu"], here["isa"], here["cores"], threads, probed_peak.rate, probed_bandwidth.rate,
        probed_peak.method, probed_bandwidth.method, source, tuple(notes),
    )  # fmt: skip
