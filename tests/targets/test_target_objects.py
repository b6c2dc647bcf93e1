"""Targets as objects: the registry resolves names, the API takes a target model where it
takes a name, what differs per target is asked of the target, and there is one
:class:`tdsl.errors.TargetError`."""

from __future__ import annotations

from pathlib import Path

import pytest
import tdsl
from tdsl.errors import StrategyError, TargetError, TdslError
from tdsl.targets import (
    TARGET_KINDS,
    AmdGpuTarget,
    CpuTarget,
    TargetKind,
    default_targets,
    named,
    resolve,
    target_names,
)

ROOT = Path(__file__).resolve().parent.parent.parent


def _tiles(target: str) -> tdsl.StrategySet:
    return tdsl.StrategySet(
        name="tiles",
        targets=[CpuTarget()],
        rules=[
            tdsl.Rule(
                target=target,
                match=tdsl.ContractionMatch(
                    lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=256, n=384, k=512
                ),
                strategy=tdsl.CpuLowering(
                    name="t", distribution=[64, 64, 0], vector_common_parallel=[8, 16, 0], vector_reduction=[0, 0, 1]
                ),
            )
        ],
    )


def test_the_registry_lists_every_kind_and_resolves_names() -> None:
    assert target_names() == ["cpu", "gfx942"]
    assert [type(t) for t in default_targets()] == list(TARGET_KINDS)
    assert resolve("gfx942") == AmdGpuTarget() and named("cpu") == CpuTarget() and named("tpu") is None
    model = CpuTarget(cpu="znver4")
    assert resolve(model) is model
    with pytest.raises(TargetError) as err:
        resolve("tpu")
    assert str(err.value) == "target 'tpu': expected one of cpu, gfx942"
    assert {k.kind_name() for k in TARGET_KINDS} == {"llvm-cpu", "rocm"}


def test_what_differs_per_target_is_asked_of_the_target() -> None:
    cpu, gpu = CpuTarget(data_tiling=True, ukernels="none"), AmdGpuTarget()
    assert cpu.runs_on_host and not gpu.runs_on_host
    assert cpu.baseline_flags() == CpuTarget().compile_flags() and gpu.baseline_flags() == gpu.compile_flags()
    assert cpu.gpu_facts is None and gpu.gpu_facts is tdsl.GFX942
    assert cpu.fallback_path() == "IREE's data tiling path" and gpu.fallback_path() == "IREE's default pipeline"
    assert CpuTarget.expect(cpu, "x") is cpu
    with pytest.raises(TargetError) as err:
        CpuTarget.expect(gpu, "the CPU tuner")
    assert str(err.value) == "the CPU tuner: expected a llvm-cpu target, received 'gfx942' (rocm)"
    assert all(issubclass(k, TargetKind) for k in TARGET_KINDS)


def test_a_cpu_target_accepts_graph_level_mmt4d_with_ukernels_off() -> None:
    refused = StrategyError(None, [])
    assert CpuTarget().accepting(refused) is None
    with pytest.raises(StrategyError) as err:
        tdsl.StrategySet(
            name="s",
            targets=[CpuTarget()],
            rules=[
                tdsl.Rule(
                    target="cpu",
                    match=tdsl.ContractionMatch(
                        lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], operand_layout="mk_kn"
                    ),
                    strategy=tdsl.DataLayout(
                        name="p",
                        pack=tdsl.PackGreedily(matmul_packed_sizes=[8, 32, 1]),
                        pack_transposes=[tdsl.PackTranspose(operand="rhs", outer_perm=[1, 0])],
                        specialize=True,
                    ),
                )
            ],
        )
    accepted = CpuTarget().accepting(err.value)
    assert accepted is not None and accepted[0] == CpuTarget(ukernels="none") and "ukernels='none'" in accepted[1]
    assert AmdGpuTarget().accepting(err.value) is None


def test_render_takes_a_target_model_in_place_of_the_sets_target() -> None:
    strategies = _tiles("cpu")
    by_name = tdsl.render(strategies, "cpu")
    model = CpuTarget(cpu="znver4")
    by_model = tdsl.render(strategies, model)
    assert by_model.target == model and by_name.target == CpuTarget()
    assert [s.text for s in by_model.scripts] == [s.text for s in by_name.scripts]
    assert "--iree-llvmcpu-target-cpu=znver4" in by_model.flags(".")
    # a model the set's rules do not fit is checked like any set
    with pytest.raises(StrategyError):
        tdsl.render(strategies, AmdGpuTarget(name="cpu"))
    # a model of a name the set lacks: no rules, IREE's default pipeline
    assert tdsl.render(strategies, AmdGpuTarget()).scripts == ()


def test_run_and_bench_refuse_a_target_that_does_not_run_here() -> None:
    with pytest.raises(tdsl.TdslError, match="executes on CPU only; target 'gfx942' is rocm"):
        tdsl.run(ROOT / "examples" / "matmul_pack" / "payload.mlir", _tiles("cpu"), AmdGpuTarget())
    with pytest.raises(tdsl.TdslError, match="measures on this CPU; target 'gfx942' is rocm"):
        tdsl.bench(ROOT / "examples" / "matmul_pack" / "payload.mlir", _tiles("cpu"), AmdGpuTarget())


def test_there_is_one_target_error() -> None:
    import tdsl.importer.spec as spec

    assert not hasattr(spec, "TargetError") or spec.TargetError is TargetError
    assert issubclass(TargetError, TdslError)
    with pytest.raises(TargetError, match=r"target 'tpu': expected 'cpu' or 'gfx942' \(or pass the target models\)"):
        spec._target_model("tpu", None)


def test_import_spec_takes_a_target_model(tmp_path: Path) -> None:
    strategies = _tiles("cpu")
    rendered = tdsl.render(strategies, "cpu")
    rendered.write(tmp_path)
    spec = next(tmp_path.glob("*.mlir"))
    model = CpuTarget(cpu="znver4")
    imported = tdsl.import_spec(spec, model)
    assert imported.targets == (model,) and [r.target for r in imported.rules] == ["cpu"]
