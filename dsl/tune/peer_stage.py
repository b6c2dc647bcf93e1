"""The last stage of a CPU tuning: the emitted set against IREE's two paths and the runtimes
users deploy (onnxruntime, OpenVINO where installed; ``.onnx`` models only) at every thread
count asked for, in interleaved rounds.

In each round and thread count, the IREE builds are timed side by side by the executor's
runner (as every stage times them) and the peers side by side in one fresh process on this
machine (:func:`tdsl.measure.peers.peer_round`), in a seeded order. With the Ray executor
the builds may run on another machine than the peers; the stage then says so.
"""

from __future__ import annotations

import random
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, TypedDict

from ..errors import TdslError
from ..measure.bench_report import paired_speedup
from ..measure.machine import machine
from ..measure.peers import choose_peers, peer_round
from ..programs.program import Program
from .executor import SampleJob
from .measure import Variant
from .session import TuneSession


class DeploymentRowJson(TypedDict):
    """One (thread count, variant) of ``report.json``'s ``deployment``."""

    threads: int
    variant: str
    median_ms: float | None
    samples_ms: list[float]
    speedup_of_tuned: float | None
    error: str


@dataclass
class DeploymentRow:
    """One variant at one thread count: its samples (seconds per call, one per round)."""

    threads: int
    variant: str
    samples: list[float] = field(default_factory=list)
    error: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


@dataclass
class Deployment:
    """The emitted set (``tuned``), IREE's paths and the peers at each thread count."""

    tuned: str
    rows: list[DeploymentRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self, threads: int, variant: str) -> DeploymentRow | None:
        return next((r for r in self.rows if (r.threads, r.variant) == (threads, variant)), None)

    def speedup(self, threads: int, variant: str) -> float | None:
        """The median of the per-round ratios ``variant / tuned`` (above 1: the tuned set is
        faster); None where either has no samples."""
        ours, other = self.row(threads, self.tuned), self.row(threads, variant)
        if ours is None or other is None or not ours.samples or not other.samples:
            return None
        return paired_speedup(other.samples, ours.samples)

    def to_json(self) -> list[DeploymentRowJson]:
        return [
            {
                "threads": r.threads,
                "variant": r.variant,
                "median_ms": None if r.median is None else r.median * 1e3,
                "samples_ms": [s * 1e3 for s in r.samples],
                "speedup_of_tuned": None if r.variant == self.tuned else self.speedup(r.threads, r.variant),
                "error": r.error,
            }
            for r in self.rows
        ]

    def lines(self) -> list[str]:
        """One line per thread count: every variant's median and the tuned set's speed-up."""
        out = []
        for threads in dict.fromkeys(r.threads for r in self.rows):
            parts = []
            for r in (r for r in self.rows if r.threads == threads):
                if r.median is None:
                    parts.append(f"{r.variant} failed ({r.error})" if r.error else f"{r.variant} -")
                    continue
                gain = self.speedup(threads, r.variant) if r.variant != self.tuned else None
                parts.append(f"{r.variant} {r.median * 1e3:.3f} ms" + (f" ({gain:.2f}x)" if gain else ""))
            out.append(f"  at {threads} thread(s): " + ", ".join(parts))
        if out:
            out.append(
                f"  (x: the emitted set's speed-up over each, the median of per-round ratios; {self.tuned} first)"
            )
        out += [f"  note: {n}" for n in self.notes]
        return out


class DeploymentStage:
    """Times the emitted build, IREE's and the peers at each thread count (module docstring)."""

    def __init__(self, session: TuneSession, program: Program) -> None:
        self.session, self.program = session, program

    def run(self, tuned: Variant, iree: Sequence[Variant], threads: Sequence[int], rounds: int) -> Deployment:
        """``tuned`` (labelled as emitted) and the built ``iree`` paths, plus the installed
        peers where the program is an ``.onnx`` model, over ``rounds`` rounds per count; no
        rows where there are no peers and the only count is the one tuned for (the model
        pass timed the same builds there)."""
        builds = [v for v in (tuned, *(v for v in iree if v is not tuned)) if v.vmfb is not None]
        result = Deployment(tuned.label)
        peers = self._peers(result.notes)
        if not peers and list(threads) == [self.session.options.threads]:
            return result  # the model pass timed these builds at this count already
        for t in threads:
            if tuned.vmfb is None:
                result.rows.append(DeploymentRow(t, tuned.label, error=tuned.build_error or "not built"))
            result.rows += [DeploymentRow(t, v.label) for v in builds]
            result.rows += [DeploymentRow(t, p) for p in peers]
        with tempfile.TemporaryDirectory(prefix="tdsl-tune-peers-") as tmp:
            inputs = self._inputs(Path(tmp)) if peers else []
            rng = random.Random(self.session.options.seed)
            self.session.progress.expect("sample", rounds * len(threads) * (len(builds) + len(peers)))
            for _ in range(rounds):
                for t in threads:
                    peers_first = bool(peers) and rng.random() < 0.5
                    if peers_first:
                        self._time_peers(result, peers, t, inputs, rng)
                    self._time_builds(result, builds, t, rng)
                    if peers and not peers_first:
                        self._time_peers(result, peers, t, inputs, rng)
                self.session.check_time()
        return result

    def _peers(self, notes: list[str]) -> tuple[str, ...]:
        found = choose_peers(self.session.options.peers, self.program.onnx_path is not None, 1, notes)
        if found and (self.session.machine["cpu"] != machine()["cpu"] or len(self.session.executor.machines()) > 1):
            notes.append(
                f"the peers ran on this machine ({machine()['cpu']}), IREE's builds on the executor's runner "
                f"({self.session.machine['cpu']})"
            )
        return found

    def _inputs(self, folder: Path) -> list[Path]:
        paths = []
        for i, data in enumerate(self.session.inputs):
            paths.append(folder / f"input{i}.npy")
            paths[-1].write_bytes(data)
        return paths

    def _time_builds(self, result: Deployment, builds: Sequence[Variant], t: int, rng: random.Random) -> None:
        """One sample of each build at ``t`` threads, side by side on the executor's runner."""
        order = list(builds)
        rng.shuffle(order)
        options = self.session.options
        jobs = [
            SampleJob(
                key=v.key,
                vmfb=v.vmfb or b"",
                function=self.session.signature.function,
                inputs=self.session.inputs,
                threads=t,
                min_time_s=options.min_time_s,
                allocator=options.allocator,
                device=options.device,
                parameters=self.session.program.parameters,
                timeout_s=600.0,
            )
            for v in order
        ]
        done = self.session.executor.sample_rounds([jobs], 0, lambda _: self.session.progress.advance("sample"))[0]
        for v, sample in zip(order, done):
            row = result.row(t, v.label)
            assert row is not None
            if sample.seconds is not None:
                row.samples.append(sample.seconds)
            else:
                row.error = sample.error

    def _time_peers(
        self, result: Deployment, names: Sequence[str], t: int, inputs: list[Path], rng: random.Random
    ) -> None:
        """One sample of each peer at ``t`` threads, side by side in one process here; a
        peer that fails keeps its error on its row."""
        assert self.program.onnx_path is not None
        try:
            timed = peer_round(
                names, self.program.onnx_path, inputs, t, self.session.options.min_time_s, rng.randrange(1 << 31)
            )
        except TdslError as err:
            for name in names:
                row = result.row(t, name)
                assert row is not None
                row.error = str(err)
            return
        for name in names:
            row = result.row(t, name)
            assert row is not None
            row.samples.append(timed[name])
            self.session.progress.advance("sample")
