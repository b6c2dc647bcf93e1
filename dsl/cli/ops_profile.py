"""``tdsl ops --profile``: the program's build run on this CPU at each ``--threads`` count,
each dispatch's share of the time, and its roofline (:mod:`tdsl.measure.dispatch_roofline`)
with what covers it: the ready rules that apply to it, else the ``tdsl tune`` space that
would tune it (from the tuner's own job builder), else none."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..compiler.ops import ProgramOps
from ..measure.dispatch_profile import DispatchTime
from ..measure.dispatch_roofline import (
    MARK,
    MARK_ROOFLINE_SHARE,
    MARK_TIME_SHARE,
    DispatchRoofline,
    dispatch_rooflines,
    profile_table,
)
from ..measure.roofline import Roofline
from ..programs.program import Program
from ..targets import Target
from .options import compile_options


@dataclass(frozen=True)
class ThreadProfile:
    """One thread count's profile: per dispatch its share of its function's time and its
    roofline (seconds and launches per call included), and the machine's roofline there."""

    threads: int
    shares: dict[str, float]
    roofline: Roofline
    rows: list[DispatchRoofline]


@dataclass(frozen=True)
class Profiled:
    """The listing with the launches the runtime counted, a profile per thread count (the
    first orders the listing) and what covers each dispatch."""

    listing: ProgramOps
    profiles: list[ThreadProfile]
    covers: dict[str, str]
    tune_spaces: dict[str, str]

    def text(self) -> list[str]:
        """The profile tables, one per thread count, and the legend of the mark."""
        lines = []
        for p in self.profiles:
            lines += profile_table(p.rows, p.roofline, self.covers)
        lines += [
            f"  {MARK}: at least {MARK_TIME_SHARE:.0%} of the time, below {MARK_ROOFLINE_SHARE:.0%} of its roofline."
            " roofline: achieved / min(peak, flops per byte x bandwidth),",
            "     or GB/s / bandwidth without flops; bytes: the buffers it binds, each once (a floor: past 100%, in cache)",
        ]
        return lines

    def to_json(self) -> dict[str, object]:
        """The listing as JSON with, per dispatch, the first count's profile fields, every
        count's (``profile``) and its tune space; ``roofline`` (the first count's) and
        ``rooflines`` (every count's) at the top."""
        data = self.listing.to_json(self.profiles[0].shares)
        by_count = [{r.name: r.to_json() for r in p.rows} for p in self.profiles]
        dispatches = data["dispatches"]
        assert isinstance(dispatches, list)
        for entry in dispatches:
            name = entry["dispatch"]
            entry["tune_space"] = self.tune_spaces.get(name)
            found = [rows[name] for rows in by_count if name in rows]
            entry |= {key: value for key, value in found[0].items() if key != "threads"} if found else {}
            entry["profile"] = found
        data["roofline"] = self.profiles[0].roofline.to_json()
        data["rooflines"] = [p.roofline.to_json() for p in self.profiles]
        return data


def tune_spaces(listing: ProgramOps, times: dict[str, float]) -> dict[str, str]:
    """{dispatch: the kind of ``tdsl tune`` space that would tune it}: the tuner's own jobs
    (:func:`tdsl.tune.op_jobs.op_jobs`, every dispatch asked for, so that no share cut
    applies), those with a space."""
    from ..tune.op_jobs import op_jobs

    spaces = {}
    for job in op_jobs(listing, only=[d.name for d in listing.dispatches], times=times):
        if job.skipped or job.dispatch is None or job.dispatch.graph_op is None:
            continue
        for d in [job.dispatch, *job.merged]:
            spaces[d.name] = f"{job.dispatch.graph_op.kind} space"
    return spaces


def coverage_text(listing: ProgramOps, spaces: dict[str, str]) -> dict[str, str]:
    """{dispatch: ``ready: RULES``, else ``tune: KIND space``, else ``none``}."""
    return {
        d.name: f"ready: {', '.join(d.covered_by)}"
        if d.covered_by
        else (f"tune: {spaces[d.name]}" if d.name in spaces else "none")
        for d in listing.dispatches
    }


def profiled(
    program: Program, target: Target, listing: ProgramOps, threads: Sequence[int], args: argparse.Namespace
) -> Profiled:
    """``target``'s build of ``program`` (no rules, as listed) run on this CPU with seeded
    inputs, one function at a time, at each of ``threads``; the machine's roofline at each
    count (:func:`tdsl.measure.roofline.machine_roofline`, cached). Failures are one line."""
    import tempfile

    import numpy as np

    from ..compiler.iree_compile import run_iree_compile
    from ..measure.dispatch_profile import calls_for, dispatch_times, time_shares, with_measured_launches
    from ..measure.roofline import machine_roofline
    from ..measure.timing import iree_sample
    from ..programs.inputs import make_inputs
    from ..programs.parameters import check_runnable
    from ..programs.signatures import signatures

    check_runnable(program)
    times: dict[int, dict[str, DispatchTime]] = {t: {} for t in threads}
    shares: dict[int, dict[str, float]] = {t: {} for t in threads}
    parameters = [a.spec for a in program.parameters]
    with tempfile.TemporaryDirectory(prefix="tdsl-ops-profile-") as tmp:
        vmfb = Path(tmp) / "module.vmfb"
        options = compile_options(args)
        run_iree_compile(program.mlir_path, [*target.compile_flags(), *options.extra_flags], vmfb, options)
        for sig in signatures(program):
            inputs = []
            for i, value in enumerate(make_inputs(sig, seed=0)):
                inputs.append(Path(tmp) / f"{sig.function}.{i}.npy")
                np.save(inputs[-1], value)
            for t in threads:
                once = iree_sample(vmfb, sig.function, inputs, t, 0.05, parameters=parameters)
                measured = dispatch_times(vmfb, sig.function, inputs, calls_for(once), parameters=parameters, threads=t)
                times[t].update(measured)
                shares[t].update(time_shares(measured))
    listing = with_measured_launches(listing, times[threads[0]])
    profiles = []
    for t in threads:
        roofline = machine_roofline(t)
        rows = dispatch_rooflines(listing, times[t], shares[t], roofline)
        profiles.append(ThreadProfile(t, shares[t], roofline, rows))
    spaces = tune_spaces(listing, {name: d.seconds for name, d in times[threads[0]].items()})
    return Profiled(listing, profiles, coverage_text(listing, spaces), spaces)
