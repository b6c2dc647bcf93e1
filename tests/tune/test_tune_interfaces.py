"""The interfaces of ``tdsl tune``: a scripted search strategy, runner and database drive a
search through :class:`~tdsl.tune.session.TuneSession`; the ready strategy's waves; the
registries of target tuners and ready spaces; the outputs of any :class:`TuneOutcome`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest
import tdsl
from tdsl.compiler.progress import NO_PROGRESS
from tdsl.errors import ArgumentError, TdslError
from tdsl.measure.dispatch_profile import DispatchTime
from tdsl.model.knobs import Choice, PowersOfTwo
from tdsl.programs.load import load_program
from tdsl.sets.space import Candidate, Space
from tdsl.sets.strategy_set import StrategySet
from tdsl.tune import CpuTuner, Gfx942Tuner, TuneOptions, ready, tuner_for, write_outputs
from tdsl.tune.cache_keys import ArtifactKey, CachedBuild, MachineKey
from tdsl.tune.executor import BuildJob, BuildResult, SampleJob, SampleResult
from tdsl.tune.measure import Variant
from tdsl.tune.op_jobs import OpJob
from tdsl.tune.outputs import REPORT_JSON, TUNED_PY, TUNED_YAML
from tdsl.tune.search import ScreenThenNeighbours, Trial, search
from tdsl.tune.session import TuneSession

MATMUL = """
func.func @mm(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x8xf32>) -> tensor<32x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x8xf32>) outs(%f : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %r : tensor<32x8xf32>
}
"""


def _space() -> Space:
    """Eight points: wg_m in 8..64, vec_m in 4, 8."""
    lowering = tdsl.GraphCpuLowering(
        name="mine",
        distribution=[PowersOfTwo("wg_m", 8, 64), 64, 0],
        vector_common_parallel=[Choice("vec_m", [4, 8]), 16, 0],
        vector_reduction=[0, 0, 8],
    )
    match = tdsl.ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32")
    return Space(
        StrategySet(
            name="mine", targets=[tdsl.CpuTarget()], rules=[tdsl.Rule(target="cpu", match=match, strategy=lowering)]
        )
    )


class ScriptedStrategy:
    """Proposes the candidates of ``waves`` in order, one wave per call; records what it is told."""

    seeded = 0

    def __init__(self, waves: list[list[Candidate]]) -> None:
        self.waves = waves
        self.asked: list[int] = []
        self.told: list[Trial] = []

    def propose(self, count: int) -> list[Candidate]:
        self.asked.append(count)
        return self.waves.pop(0)[:count] if self.waves else []

    def tell(self, trials: Sequence[Trial]) -> None:
        self.told.extend(trials)


class ScriptedExecutor:
    """Builds stand in (no compile) and samples take ``seconds(set)``: a builder and a runner."""

    name = "scripted"

    def __init__(self, seconds: Callable[[dict[str, Any] | None], float]) -> None:
        self.seconds = seconds
        self.sets: dict[str, dict[str, Any] | None] = {}
        self.built: list[str] = []

    def machines(self) -> list[dict[str, Any]]:
        return [{"cpu": "scripted", "isa": "avx2", "cores": 1}]

    def build_all(
        self, jobs: Sequence[BuildJob], on_done: Callable[[BuildResult], None] = lambda r: None
    ) -> list[BuildResult]:
        results = []
        for job in jobs:
            self.sets[job.key] = job.strategies
            self.built.append(job.key)
            results.append(BuildResult(job.key, f"module {job.key}".encode(), "", 0.0, {}))
            on_done(results[-1])
        return results

    def sample_rounds(
        self,
        rounds: Sequence[Sequence[SampleJob]],
        runner: int = 0,
        on_done: Callable[[SampleResult], None] = lambda r: None,
    ) -> list[list[SampleResult]]:
        return [[SampleResult(job.key, self.seconds(self.sets.get(job.key)), "") for job in jobs] for jobs in rounds]

    def close(self) -> None:
        pass

    def __enter__(self) -> "ScriptedExecutor":
        return self

    def __exit__(self, *args: Any) -> None:
        pass


class MemoryDatabase:
    """A :class:`~tdsl.tune.database.Database` in a few dicts (nothing persists)."""

    def __init__(self) -> None:
        self.builds: dict[str, CachedBuild] = {}
        self.times: dict[tuple[str, str, str], list[float]] = {}
        self.profiles: dict[tuple[str, str, str], dict[str, DispatchTime]] = {}
        self.verdicts: dict[tuple[str, str], dict[str, Any]] = {}

    def get_build(self, key: ArtifactKey) -> CachedBuild | None:
        return self.builds.get(key.digest())

    def put_build(
        self, key: ArtifactKey, vmfb: bytes | None, error: str, seconds: float, report: dict[str, Any]
    ) -> None:
        self.builds[key.digest()] = CachedBuild(vmfb, error, seconds, report, created=0.0)

    def samples(self, key: ArtifactKey, machine: MachineKey, setup: str) -> list[float]:
        return list(self.times.get((key.digest(), machine.digest(), setup), []))

    def add_samples(
        self,
        key: ArtifactKey,
        machine: MachineKey,
        setup: str,
        seconds: Sequence[float | None],
        errors: Sequence[str] | None = None,
    ) -> None:
        self.times.setdefault((key.digest(), machine.digest(), setup), []).extend(s for s in seconds if s is not None)

    def get_profile(self, key: ArtifactKey, machine: MachineKey, setup: str) -> dict[str, DispatchTime] | None:
        return self.profiles.get((key.digest(), machine.digest(), setup))

    def put_profile(self, key: ArtifactKey, machine: MachineKey, setup: str, times: dict[str, DispatchTime]) -> None:
        self.profiles[(key.digest(), machine.digest(), setup)] = times

    def get_verdict(self, key: ArtifactKey, reference_key_digest: str) -> dict[str, Any] | None:
        return self.verdicts.get((key.digest(), reference_key_digest))

    def put_verdict(self, key: ArtifactKey, reference_key_digest: str, verdict: dict[str, Any]) -> None:
        self.verdicts[(key.digest(), reference_key_digest)] = verdict

    def stats(self) -> dict[str, Any]:
        return {"builds": len(self.builds)}

    def close(self) -> None:
        pass


def _wg_m(data: dict[str, Any] | None) -> int | None:
    return None if data is None else int(data["rules"][0]["strategy"]["distribution"][0])


def _session(tmp_path: Path, executor: ScriptedExecutor, database: MemoryDatabase, **options: Any) -> TuneSession:
    path = tmp_path / "mm.mlir"
    path.write_text(MATMUL)
    tune_options = TuneOptions(**{"budget": 3, "rounds": 3, "min_time_s": 0.01, "finalists": 2, **options})
    return TuneSession(load_program(path), tune_options, executor, database, NO_PROGRESS)


def test_a_scripted_strategy_runner_and_database_drive_a_search(tmp_path: Path) -> None:
    """The strategy's proposals are what is built and timed (the first wave 2/3 of the budget,
    the second the rest), it is told each one's median, and the one twice as fast as the
    base in every round wins; a rerun on the same database builds nothing and decides the same."""
    space = _space()
    points = {(c.values["wg_m"], c.values["vec_m"]): c for c in space.candidates()}
    seconds = lambda data: 1e-3 if _wg_m(data) != 32 else 0.5e-3  # noqa: E731

    def run(database: MemoryDatabase) -> tuple[OpJob, ScriptedStrategy, ScriptedExecutor]:
        executor = ScriptedExecutor(seconds)
        session = _session(tmp_path, executor, database)
        base = Variant("base", None)
        session.build([base])
        strategy = ScriptedStrategy([[points[(8, 4)], points[(16, 8)]], [points[(32, 4)], points[(64, 4)]]])
        job = OpJob(name="space", dispatch=None, share=1.0, space=space)
        search(session, job, space, base, 3, lambda c: (c.strategies, c.strategies.rules), strategy=strategy)
        return job, strategy, executor

    database = MemoryDatabase()
    job, strategy, executor = run(database)
    assert strategy.asked == [2, 1]
    assert [t.values["wg_m"] for t in strategy.told] == [8, 16, 32]
    assert all(t.median for t in strategy.told)
    assert [v.label for v in job.variants] == [f"space#{points[p].index}" for p in ((8, 4), (16, 8), (32, 4))]
    assert job.winner is not None and job.winner.values == {"wg_m": 32, "vec_m": 4}
    assert job.gain == pytest.approx(2.0) and job.spaces == [space]
    assert len(executor.built) == 4  # the base and the three candidates
    again, _, rebuilt = run(database)
    assert rebuilt.built == [] and again.winner is not None and again.winner.values == job.winner.values


def test_the_ready_strategy_screens_seeds_and_a_sample_then_the_fastest_neighbours() -> None:
    space = _space()
    strategy = ScreenThenNeighbours(space, budget=6, seed=0)
    first = strategy.propose(4)
    assert len(first) == 4 and len({c.index for c in first}) == 4 and strategy.seeded == 0
    fastest = first[2]
    strategy.tell([Trial(c.values, 1e-3 if c is not fastest else 1e-4) for c in first])
    second = strategy.propose(2)
    assert 1 <= len(second) <= 2
    assert not {c.index for c in second} & {c.index for c in first}
    # each is one knob one step away from one of the two fastest
    leaders = [fastest.values, next(c.values for c in first if c is not fastest)]
    assert all(any(c.values in list(space.neighbors(leader)) for leader in leaders) for c in second)


def test_the_tuners_are_registered_by_target_kind() -> None:
    assert isinstance(tuner_for(tdsl.CpuTarget().kind), CpuTuner)
    assert isinstance(tuner_for(tdsl.AmdGpuTarget().kind), Gfx942Tuner)
    assert tuner_for("llvm-cpu").searches_user_spaces and not tuner_for("rocm").searches_user_spaces
    with pytest.raises(ArgumentError) as err:
        tuner_for("vulkan")
    assert str(err.value).startswith(
        "--target: expected a target of kind llvm-cpu or rocm, received one of kind 'vulkan'"
    )
    assert "\n" not in str(err.value)


def test_the_ready_library_fills_the_registry_and_a_missing_one_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from tdsl.strategies.cpu.tuning import ReadyCpuSpaces
    from tdsl.strategies.gpu.tuning import ReadyGfx942Spaces

    assert isinstance(ready.cpu_spaces(), ReadyCpuSpaces) and isinstance(ready.gfx942_spaces(), ReadyGfx942Spaces)
    monkeypatch.setattr(ready, "_CPU", [])
    with pytest.raises(TdslError) as err:
        ready.cpu_spaces()
    assert (
        str(err.value)
        == "no ready CPU spaces are registered: import tdsl.strategies (tdsl's ready library) before tuning"
    )


class Outcome:
    """The least a :class:`~tdsl.tune.target_tuner.TuneOutcome` holds."""

    tuned = StrategySet(name="tuned", targets=[tdsl.CpuTarget(data_tiling=True)], rules=[])
    interrupted = False
    command = "tdsl tune --scripted"

    def comments(self) -> list[str]:
        return []

    def notes(self) -> list[str]:
        return ["Scripted."]

    def report(self) -> dict[str, object]:
        return {"scripted": True}

    def table(self) -> str:
        return "scripted"

    def plot(self, path: Path) -> bool:
        return False


def test_the_outputs_are_written_from_any_outcome(tmp_path: Path) -> None:
    paths = write_outputs(Outcome(), tmp_path / "out", with_plot=True)
    assert sorted(p.name for p in paths) == sorted([TUNED_PY, TUNED_YAML, REPORT_JSON])
    assert tdsl.load(tmp_path / "out" / TUNED_PY) == Outcome.tuned
    assert "emitted by `tdsl tune --scripted`" in (tmp_path / "out" / TUNED_YAML).read_text()
    report = json.loads((tmp_path / "out" / REPORT_JSON).read_text())
    assert report["scripted"] is True and "tdsl" in json.dumps(report)
