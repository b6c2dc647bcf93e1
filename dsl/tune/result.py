"""The outcome of a CPU tuning (:class:`TuneResult`, a :class:`~tdsl.tune.target_tuner.TuneOutcome`)
and how it reads: a comment per emitted rule (its measured speed-up, the noise, the
baseline), the header notes (the machine, the model pass, the numerics verdict), the body of
``report.json`` (every variant with its knob values, compile status, samples; the space
sizes and what was pruned), the table ``tdsl tune`` prints and the plot (per op, every
candidate's median against the base, log scale, with the spread of its samples)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..measure.machine import ISA_NAMES, Machine
from ..sets.strategy_set import StrategySet
from .cache_keys import CacheStats, Verdict
from .measure import Variant, speedup
from .op_jobs import OpJob
from .peer_stage import Deployment
from .session import DATA_TILING, IREE_DEFAULT, TuneOptions


@dataclass
class TuneResult:
    """A tuning's outcome: the emitted set, the baselines, the model pass, every job."""

    payload: str
    target: str
    machine: Machine
    options: TuneOptions
    tuned: StrategySet
    program: list[Variant]
    jobs: list[OpJob]
    final: list[Variant]
    chosen: str
    noise: float
    numerics: Verdict
    interrupted: bool
    seconds: float
    cache_stats: CacheStats
    share_basis: str = "flops"
    """What the jobs' shares are shares of: ``time`` (IREE default's time per dispatch,
    profiled on this machine: :func:`tdsl.measure.dispatch_profile.dispatch_times`) or
    ``flops`` (flops x launches, where the profile failed; :attr:`share_note` says why)."""
    share_note: str = ""
    deployment: Deployment | None = None
    """The emitted set against IREE's paths and the peer runtimes at each thread count."""

    def variant(self, label: str) -> Variant | None:
        return next((v for v in self.final if v.label == label), None)

    @property
    def command(self) -> str:
        return "tdsl tune"

    def comments(self) -> list[str]:
        return rule_comments(self)

    def notes(self) -> list[str]:
        return notes(self)

    def report(self) -> dict[str, object]:
        return report_json(self)

    def table(self) -> str:
        return table(self)

    def plot(self, path: Path) -> bool:
        plot(self, path)
        return True


def _ms(v: Variant | None) -> str:
    return f"{v.median * 1e3:.3f} ms" if v is not None and v.median else "-"


def _time_or_failure(v: Variant) -> str:
    """Its median, or why it has none: an IREE path that does not compile the model (IREE
    3.13's data tiling on GPT-2's masked attention) or fails to run says so."""
    if v.median:
        return _ms(v)
    if v.build_error:
        return "did not compile"
    return "failed to run" if v.sample_errors else "-"


def machine_line(result: TuneResult) -> str:
    m = result.machine
    isa = ISA_NAMES.get(str(m.get("isa")), str(m.get("isa")))
    return f"{m.get('cpu')}, {isa}, {m.get('cores')} cores; tuned for {result.options.threads} thread(s), allocator {result.options.allocator}"


def rule_comments(result: TuneResult) -> list[str]:
    """One comment per rule of the emitted set: what it pins and what it measured."""
    emittable = [(job, job.winner or job.near_winner) for job in result.jobs]
    by_strategy = {
        r.strategy.name: (job, candidate)
        for job, candidate in emittable
        if candidate is not None
        for r in candidate.rules
    }
    comments = []
    for rule in result.tuned.rules:
        job, candidate = by_strategy.get(rule.strategy.name, (None, None))
        if job is None or candidate is None or job.reference is None:
            comments.append(f"{rule.strategy.name}: kept from the base {result.chosen}")
            continue
        gain = (job.gain if job.winner else None) or speedup(candidate, job.reference) or 0.0
        near = (
            ""
            if job.winner
            else f"; below the noise alone, emitted because the model pass timed it with the others ({result.chosen})"
        )
        comments.append(
            f"{job.name} ({job.what}, x{job.launches}): "
            f"{gain:.2f}x over {job.reference.label} in the whole program, the median of its per-round ratios "
            f"(medians {_ms(candidate)} vs {_ms(job.reference)} over {len(candidate.samples)} rounds, noise {job.noise:.1%}{near}); "
            f"knobs {candidate.values}"
        )
    return comments


def notes(result: TuneResult) -> list[str]:
    """Header lines: the machine, the model pass and the numerics verdict."""
    chosen = result.variant(result.chosen)
    iree = [v for v in result.final if v.label in (IREE_DEFAULT, DATA_TILING) and v.median]
    best_iree = min(iree, key=lambda v: v.median or 0.0) if iree else None
    lines = [f"Tuned {result.payload} on {machine_line(result)}."]
    instead_of = result.numerics.get("instead_of")
    if instead_of:
        lines.append(
            f"Model pass: {instead_of} was the fastest, but its outputs differ from IREE default's; emitted {result.chosen} {_ms(chosen) if chosen else ''}, the faster IREE path."
        )
    elif chosen is not None and chosen is best_iree:
        lines.append(
            f"Model pass: kept {chosen.label} {_ms(chosen)}, the faster IREE path: nothing beat it round by round by more than the noise "
            f"({result.noise:.1%})" + _others(result, chosen)
        )
    elif (
        chosen is not None and chosen.label == IREE_DEFAULT and best_iree is not None and best_iree.label == DATA_TILING
    ):
        lines.append(
            f"Model pass: kept {chosen.label} {_ms(chosen)}: {best_iree.label} {_ms(best_iree)} ({speedup(best_iree, chosen) or 0.0:.2f}x) "
            f"is within the noise ({result.noise:.1%}) of it, and nothing beat either by more"
            + _others(result, chosen, best_iree)
        )
    elif chosen is not None and best_iree is not None:
        lines.append(
            f"Model pass: {result.chosen} {_ms(chosen)}, {best_iree.label} {_ms(best_iree)} "
            f"({speedup(chosen, best_iree) or 0.0:.2f}x; noise {result.noise:.1%})" + _others(result, chosen, best_iree)
        )
    if result.numerics.get("checked"):
        dropped = result.numerics.get("dropped") or []
        if instead_of:
            lines.append(
                f"Numerics: {instead_of}'s outputs differ from IREE default's beyond tolerance, and so did its target's without rules: dropped {', '.join(dropped)}."
            )
        else:
            lines.append(
                "Numerics: outputs match IREE default within tolerance"
                + (f"; dropped {', '.join(dropped)}" if dropped else "")
                + "."
            )
    if result.deployment is not None:
        lines += [f"Compared {line.strip()}" for line in result.deployment.lines() if line.strip().startswith("at ")]
    if result.interrupted:
        lines.append("Interrupted: only what was measured before the stop is here.")
    return lines


def _others(result: TuneResult, *shown: Variant) -> str:
    """``"; "`` and the model pass's other builds with their times ("" if none)."""
    rest = [f"{v.label} {_time_or_failure(v)}" for v in result.final if all(v is not s for s in shown)]
    return "; " + ", ".join(rest) if rest else ""


def report_json(result: TuneResult) -> dict[str, object]:
    """The body of ``report.json`` (after the machine header)."""
    return {
        "payload": result.payload,
        "target": result.target,
        "options": {k: list(v) if isinstance(v, tuple) else v for k, v in vars(result.options).items()},
        "machine_line": machine_line(result),
        "seconds": round(result.seconds, 1),
        "interrupted": result.interrupted,
        "chosen": result.chosen,
        "noise": result.noise,
        "numerics": result.numerics,
        "share_basis": result.share_basis,
        "share_note": result.share_note,
        "program": [v.to_json() for v in result.program],
        "ops": [job.to_json() for job in result.jobs],
        "model_pass": [v.to_json() for v in result.final],
        "deployment": result.deployment.to_json() if result.deployment is not None else [],
        "deployment_notes": result.deployment.notes if result.deployment is not None else [],
        "cache": result.cache_stats,
    }


def table(result: TuneResult) -> str:
    """The text table ``tdsl tune`` prints: one line per op job, then the model pass."""
    lines = [f"tuned {result.payload} for {result.target} on {machine_line(result)} in {result.seconds:.0f} s"]
    lines.append(
        f"  {'op':<5} {'shapes':<44} {'x':>3} {'share':>6} {'tried':>5} {'base':>11} {'best':>11} {'speedup':>8}  verdict"
    )
    if result.jobs and result.jobs[0].dispatch is not None:
        lines.append(
            "  (share: of IREE default's time per call, profiled per dispatch)"
            if result.share_basis == "time"
            else f"  (share: of the flops x launches; {result.share_note or 'no profile'})"
        )
    for job in result.jobs:
        shapes = job.what[:44]
        if job.skipped or job.reference is None:
            lines.append(
                f"  {job.name:<5} {shapes:<44} {job.launches:>3} {job.share:>6.1%} {'-':>5} {'-':>11} {'-':>11} {'-':>8}  {job.skipped or 'not reached'}"
            )
            continue
        best, base, gain = job.fastest if job.fastest else (None, job.reference, None)
        near = job.near_winner
        if near is not None and near.rules and all(rule in result.tuned.rules for rule in near.rules):
            verdict = f"emitted with the others (alone, no round-by-round win above the {job.noise:.1%} noise; together they won the model pass)"
        elif job.winner is None:
            verdict = f"kept {job.reference.label} (no round-by-round win above the {job.noise:.1%} noise)"
        elif any(rule in result.tuned.rules for rule in job.winner.rules):
            verdict = "emitted"
        else:
            verdict = "won alone; not emitted (the model pass kept IREE's path)"
        lines.append(
            f"  {job.name:<5} {shapes:<44} {job.launches:>3} {job.share:>6.1%} {len(job.variants):>5} "
            f"{_ms(base):>11} {_ms(best):>11} {(f'{gain:.2f}x' if gain else '-'):>8}  {verdict}"
        )
    lines.append(
        "  model pass: "
        + ", ".join(f"{v.label} {_time_or_failure(v)}" for v in result.final)
        + f" -> emitted {result.chosen}"
    )
    lines.append(
        "  (base and best: medians over the rounds; speedup: the median of the per-round ratios, which drift less)"
    )
    if result.deployment is not None and result.deployment.rows:
        lines.append("  deployment (the emitted set against IREE's paths and the runtimes users deploy):")
        lines += result.deployment.lines()
    return "\n".join(lines)


def plot(result: TuneResult, path: Path) -> None:
    """Candidates' medians against the base per op, log scale, with their spread."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = [j for j in result.jobs if j.reference is not None and j.reference.median]
    deployed = result.deployment if result.deployment is not None and result.deployment.rows else None
    fig, axes = plt.subplots(
        1, 2 if deployed else 1, figsize=(max(6, 1.2 * len(jobs) + 2) + (6 if deployed else 0), 4.5), squeeze=False
    )
    ax = axes[0][0]
    for x, job in enumerate(jobs):
        base = job.reference.median if job.reference else None
        for v in job.variants:
            if not v.samples or not base:
                continue
            ratios = [s / base for s in v.samples]
            mid = (v.median or 0) / base
            ax.errorbar(
                x,
                mid,
                yerr=[[mid - min(ratios)], [max(ratios) - mid]],
                fmt="o",
                ms=3,
                alpha=0.5,
                color="tab:green" if v is job.winner else "tab:blue",
            )
    ax.axhline(1.0, color="black", lw=1, label="base (1.0)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(jobs)), [j.name for j in jobs])
    ax.set_ylabel("time / base time (lower is better)")
    ax.set_title(f"tdsl tune: {Path(result.payload).name} on {machine_line(result)}", fontsize=8)
    if deployed is not None:
        _plot_deployment(axes[0][1], deployed)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_deployment(ax: Any, deployment: Deployment) -> None:
    """Each variant's median time over the emitted set's, per thread count (log scale)."""
    counts = list(dict.fromkeys(r.threads for r in deployment.rows))
    variants = list(dict.fromkeys(r.variant for r in deployment.rows))
    width = 0.8 / max(1, len(variants))
    for i, variant in enumerate(variants):
        xs, heights = [], []
        for g, t in enumerate(counts):
            row, ours = deployment.row(t, variant), deployment.row(t, deployment.tuned)
            if row is not None and ours is not None and row.median and ours.median:
                xs.append(g + (i - (len(variants) - 1) / 2) * width)
                heights.append(row.median / ours.median)
        ax.bar(xs, [h - 1.0 for h in heights], width * 0.9, bottom=1.0, label=variant)
    ax.axhline(1.0, color="black", lw=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(counts)), [f"{t} thread(s)" for t in counts])
    ax.set_ylabel(f"median time / {deployment.tuned}'s (above 1: the emitted set is faster)")
    ax.legend(fontsize=7)
