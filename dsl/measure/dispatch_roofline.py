"""A roofline per dispatch: what each dispatch of a profiled program achieves against what
this machine can do (:class:`~tdsl.measure.roofline.Roofline`), as ``tdsl ops --profile``
lists it.

Per launch, a dispatch does the flops of its root op (2 per point of the loop nest of a
contraction or convolution that multiplies, 1 per point of one that only adds or takes a
maximum, as pooling does; none for other roots) and moves at least the bytes of the
buffers it binds, each once (:attr:`~tdsl.compiler.ops.Dispatch.bound_bytes`: a floor on
its traffic). From the profiled seconds and launches per call: achieved GFLOP/s and GB/s,
arithmetic intensity (flops per byte), attainable = min(peak, intensity x bandwidth), and
the dispatch's roofline share, achieved / attainable (achieved GB/s / bandwidth for a
dispatch without flops). That share is the roofline's time over the measured time, so it
is at most 1 wherever the dispatch takes at least that time; a dispatch whose operands
stay in the caches between calls can pass 1 on the bandwidth side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence, TypedDict

from ..compiler.ops import Dispatch, ProgramOps
from .dispatch_profile import DispatchTime
from .roofline import Roofline

MARK_TIME_SHARE = 0.05
"""A dispatch taking at least this share of the time ..."""
MARK_ROOFLINE_SHARE = 0.20
"""... and running below this share of its roofline is marked (:attr:`DispatchRoofline.below_roofline`)."""
MARK = "!"
MULTIPLIES = ("arith.mulf", "arith.muli")


def flops_per_launch(d: Dispatch) -> float:
    """The flops of one launch of ``d``: its root's points x 2 for a contraction or
    convolution whose body multiplies, x 1 for one that does not (pooling adds or takes a
    maximum); 0 for any other root, no root or a dynamic loop."""
    root = d.root
    if root is None or root.kind not in ("contraction", "convolution") or any(s < 0 for s in root.loop_sizes):
        return 0.0
    per_point = 2 if any(op in MULTIPLIES for op in root.body) or not root.body else 1
    return float(per_point * math.prod(root.loop_sizes))


def roofline_share(
    flops: float, moved: float | None, seconds: float, peak_gflops: float, bandwidth_gb_s: float
) -> float | None:
    """Achieved over attainable of a dispatch doing ``flops`` and moving ``moved`` bytes in
    ``seconds``: the roofline's time, max(flops / peak, bytes / bandwidth), over
    ``seconds``; without flops, achieved GB/s over the bandwidth; None where neither is
    known or ``seconds`` is not positive."""
    if seconds <= 0 or (flops <= 0 and not moved):
        return None
    floor = max(flops / (peak_gflops * 1e9), (moved or 0.0) / (bandwidth_gb_s * 1e9))
    return floor / seconds


class DispatchRooflineJson(TypedDict):
    """One dispatch's profile at one thread count, as ``tdsl ops --profile --json`` prints it."""

    threads: int
    time_share: float
    seconds: float
    launches: float
    flops: float
    bytes: float | None
    gflops: float | None
    gbytes_per_s: float | None
    intensity: float | None
    roofline_share: float | None
    below_roofline: bool


@dataclass(frozen=True)
class DispatchRoofline:
    """One dispatch of a profile at ``threads`` threads: its share of its function's time,
    seconds, launches, flops and bytes per call, and its share of the roofline."""

    name: str
    threads: int
    time_share: float
    seconds: float
    launches: float
    flops: float
    bytes: float | None
    roofline_share: float | None

    @property
    def gflops(self) -> float | None:
        return self.flops / self.seconds / 1e9 if self.flops > 0 and self.seconds > 0 else None

    @property
    def gbytes_per_s(self) -> float | None:
        return self.bytes / self.seconds / 1e9 if self.bytes and self.seconds > 0 else None

    @property
    def intensity(self) -> float | None:
        """Flops per byte moved (None without either)."""
        return self.flops / self.bytes if self.flops > 0 and self.bytes else None

    @property
    def below_roofline(self) -> bool:
        """At least :data:`MARK_TIME_SHARE` of the time, below :data:`MARK_ROOFLINE_SHARE`
        of its roofline."""
        return (
            self.time_share >= MARK_TIME_SHARE
            and self.roofline_share is not None
            and self.roofline_share < MARK_ROOFLINE_SHARE
        )

    def rate(self) -> str:
        """``23.1 GFLOP/s``, else ``4.2 GB/s`` without flops, else ``-``."""
        if self.gflops is not None:
            return f"{self.gflops:.1f} GFLOP/s"
        return f"{self.gbytes_per_s:.1f} GB/s" if self.gbytes_per_s is not None else "-"

    def to_json(self) -> DispatchRooflineJson:
        return {
            "threads": self.threads,
            "time_share": self.time_share,
            "seconds": self.seconds,
            "launches": self.launches,
            "flops": self.flops,
            "bytes": self.bytes,
            "gflops": self.gflops,
            "gbytes_per_s": self.gbytes_per_s,
            "intensity": self.intensity,
            "roofline_share": self.roofline_share,
            "below_roofline": self.below_roofline,
        }


def dispatch_rooflines(
    ops: ProgramOps, profile: Mapping[str, DispatchTime], shares: Mapping[str, float], roofline: Roofline
) -> list[DispatchRoofline]:
    """Each dispatch of ``ops`` that ``profile`` timed (seconds and launches per call, at
    ``roofline.threads`` threads) against ``roofline``, by share of the time, largest first."""
    rows = []
    for d in ops.dispatches:
        timed = profile.get(d.name)
        if timed is None:
            continue
        flops = flops_per_launch(d) * timed.launches
        moved = d.bound_bytes * timed.launches if d.bound_bytes is not None else None
        share = roofline_share(flops, moved, timed.seconds, roofline.peak_gflops, roofline.bandwidth_gb_s)
        rows.append(
            DispatchRoofline(
                d.name, roofline.threads, shares.get(d.name, 0.0), timed.seconds, timed.launches, flops, moved, share
            )
        )
    return sorted(rows, key=lambda r: -r.time_share)


_DISPATCH = re.compile(r"dispatch_\d+.*$")


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Each dispatch name without its function's prefix (``dispatch_6_conv_..``), where
    that keeps them apart; else the names as they are."""
    short = {}
    for name in names:
        found = _DISPATCH.search(name)
        short[name] = found.group(0) if found else name
    return short if len(set(short.values())) == len(short) else {name: name for name in names}


def _ms(seconds: float) -> str:
    """Milliseconds, three decimals (two significant digits below 0.01 ms)."""
    ms = seconds * 1e3
    return f"{ms:.3f}" if ms >= 0.01 or ms == 0 else f"{ms:.2g}"


def profile_table(rows: Sequence[DispatchRoofline], roofline: Roofline, covers: Mapping[str, str]) -> list[str]:
    """The lines of one thread count's profile: a row per dispatch (mark, share of the time,
    ms per call, GFLOP/s or GB/s, share of its roofline, what covers it, its name), then
    the roofline's footer, how it was measured, and its notes."""
    names = short_names([r.name for r in rows])
    width = max([len("covered by"), *(len(covers.get(r.name, "none")) for r in rows)])
    threads = f"{roofline.threads} thread{'s' if roofline.threads > 1 else ''}"
    lines = [
        f"  profile at {threads}:",
        f"  {'':1} {'time':>6} {'ms':>9} {'achieved':>14} {'roofline':>8}  {'covered by':<{width}}  dispatch",
    ]
    for r in rows:
        mark = MARK if r.below_roofline else ""
        share = f"{r.roofline_share:.0%}" if r.roofline_share is not None else "-"
        lines.append(
            f"  {mark:1} {r.time_share:>6.1%} {_ms(r.seconds):>9} {r.rate():>14} {share:>8}  "
            f"{covers.get(r.name, 'none'):<{width}}  {names[r.name]}"
        )
    lines += [f"  {roofline.footer()}", f"  {roofline.methods()}"]
    lines += [f"  note: {note}" for note in roofline.notes]
    return lines
