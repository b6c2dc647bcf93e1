"""tdsl compile: IREE default without strategies, --report / --baseline side by side (CPU
lowering configs as structured fields; gfx942 kernel resources), --keep-dump, the --json
header, one summary line for many unmatched rules, -v / -q."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tdsl.cli as cli
import tdsl.cli.builds as cli_builds
from tdsl import bindings
from tdsl.cli import main
from tdsl.cli.options import progress_bars
from tdsl.compiler.dispatches import DispatchSummary, OpConfig
from tdsl.compiler.iree_compile import CompileResult
from tdsl.compiler.outputs import DUMP_MARKER
from tdsl.compiler.progress import Progress
from tdsl.compiler.report import CompileReport, RuleOutcome, side_by_side
from tdsl.measure.machine import SCHEMA_VERSION
from tdsl.model.kinds import Injection

ROOT = Path(__file__).resolve().parent.parent.parent
MLP = ROOT / "examples" / "mlp"
PACK = ROOT / "examples" / "matmul_pack"
AUTO = ROOT / "examples" / "cpu_auto"
CONV_GPU = ROOT / "examples" / "conv1x1_gpu"


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tdsl: error: "), err
    return err[len("tdsl: error: ") : -1]


# --------------------------------------------------------------------------------------
# Lowering configs as structured fields (the bindings read them).


def test_lowering_configs_are_read_as_fields() -> None:
    text = (
        "func.func @f() attributes {cpu = #iree_cpu.lowering_config<distribution = [64, 64, 0], "
        "vector_common_parallel = [8, [32], 0]>, gpu = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], "
        "mma_kind = #iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>, subgroup_basis = [[2, 2, 1], [0, 1, 2]]}>, "
        "old = #iree_codegen.lowering_config<tile_sizes = [[64, 64], [8, 8]]>} { return }"
    )
    (func,) = [op for op in bindings.walk(text) if op.name == "func.func"]
    cpu, gpu, old = (func.values[k] for k in ("cpu", "gpu", "old"))
    assert isinstance(cpu, bindings.LoweringConfig) and cpu.dialect == "iree_cpu"
    assert cpu.fields == {"distribution": (64, 64, 0), "vector_common_parallel": (8, (32,), 0)}
    assert isinstance(gpu, bindings.LoweringConfig) and gpu.dialect == "iree_gpu"
    assert gpu.fields["subgroup_basis"] == ((2, 2, 1), (0, 1, 2))
    assert gpu.fields["mma_kind"] == "#iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>"
    assert isinstance(old, bindings.LoweringConfig) and old.fields == {"tile_sizes": ((64, 64), (8, 8))}


def _report(
    dispatches: list[DispatchSummary], rules: tuple[RuleOutcome, ...] = (), strategy_set: str | None = "s"
) -> CompileReport:
    result = CompileResult(("iree-compile",), 0, "", (), 0.5, None)
    return CompileReport(Path("p.mlir"), "cpu", None, (), result, tuple(dispatches), rules, strategy_set=strategy_set)


def _dispatch(name: str, pipeline: str, **fields: Any) -> DispatchSummary:
    config = OpConfig("linalg.matmul", "iree_cpu", fields, "#iree_cpu.lowering_config<...>")
    return DispatchSummary(name, pipeline, None, ("linalg.matmul",), (), (), (config,))


def test_side_by_side_pairs_renumbered_dispatches_by_what_they_compute() -> None:
    ours = _report(
        [
            _dispatch("f_dispatch_0_pack_f32", "#iree_cpu.pipeline<DataTiling>", distribution=(4, 64)),
            _dispatch(
                "f_dispatch_2_matmul_8x8x8_f32", "#iree_cpu.pipeline<DoubleTilingExpert>", distribution=(64, 64, 0)
            ),
        ]
    )
    theirs = _report(
        [
            _dispatch(
                "f_dispatch_0_matmul_8x8x8_f32", "#iree_cpu.pipeline<DoubleTilingExpert>", distribution=(32, 32, 0)
            )
        ],
        strategy_set=None,
    )
    table = dict(side_by_side(ours, theirs))
    assert table["f_dispatch_2_matmul_8x8x8_f32 (iree-default: f_dispatch_0_matmul_8x8x8_f32)"] == [
        ("pipeline", "DoubleTilingExpert", "DoubleTilingExpert"),
        ("linalg.matmul distribution", "[64, 64, 0]", "[32, 32, 0]"),
    ]
    assert table["f_dispatch_0_pack_f32 (strategy only)"][0] == ("pipeline", "DataTiling", "-")
    text = CompileReport(**{**ours.__dict__, "baseline": theirs}).text(report=True)
    assert "* linalg.matmul distribution  [64, 64, 0]" in text


def test_many_unmatched_rules_are_one_summary_line() -> None:
    rules = tuple(
        RuleOutcome(i, f"r{i}", "cpu_lowering", Injection.TUNING_SPEC, ("d",) if i in (0, 5) else ()) for i in range(8)
    )
    report = _report([], rules, strategy_set="cpu_auto")
    assert report.warnings(verbose=False) == [
        "6 of 8 rules of cpu_auto matched nothing in p.mlir (rules 1-4, 6-7; -v lists them, --strict makes it an error)"
    ]
    assert len(report.warnings()) == 6
    text = report.text(verbose=False)
    assert "NOTHING" not in text and "6 more rules matched nothing: 1-4, 6-7 (-v lists them)" in text
    assert text.count("NOTHING") == 0 and report.text(verbose=True).count("NOTHING") == 6
    few = _report([], rules[:3], strategy_set="s")
    assert len(few.warnings(verbose=False)) == 2


# --------------------------------------------------------------------------------------
# Compiles.


@pytest.mark.compile
def test_compile_without_strategies_reports_iree_default(capsys) -> None:
    assert main(["compile", str(MLP / "payload.mlir"), "--target", "cpu", "--report"]) == 0
    out = capsys.readouterr().out
    assert "with IREE's default pipeline (no strategies)" in out and "rules:" not in out
    assert "report per dispatch:" in out and "linalg.matmul distribution" in out and "DoubleTilingExpert" in out


def test_compile_without_strategies_needs_a_known_target(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import tdsl.compiler.compile as compile_module

    monkeypatch.setattr(compile_module, "run_iree_compile", lambda *a, **k: pytest.fail("compiled"))
    assert main(["compile", str(MLP / "payload.mlir"), "--target", "gfx1100"]) == 2
    assert (
        _err_line(capsys)
        == "--target 'gfx1100': without strategies, expected one of ['cpu', 'gfx942'] (IREE's default pipeline for that target)"
    )
    assert (
        main(
            [
                "compile",
                str(MLP / "payload.mlir"),
                "--target",
                "cpu",
                "--strategies",
                str(MLP / "strategy.py"),
                "--baseline",
            ]
        )
        == 2
    )
    assert "--baseline: the side-by-side report needs --report (or --json)" in _err_line(capsys)


@pytest.mark.compile
def test_cpu_baseline_side_by_side(capsys) -> None:
    argv = [
        "compile",
        str(MLP / "payload.mlir"),
        "--strategies",
        str(MLP / "strategy.py"),
        "--target",
        "cpu",
        "--report",
        "--baseline",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "report per dispatch, strategy | iree-default ('*' differs):" in out
    assert "mlp_dispatch_4_matmul_128x128x512_f32 (iree-default: mlp_dispatch_1_matmul_128x128x512_f32)" in out
    assert "* linalg.matmul distribution" in out and "(strategy only)" in out and "(iree-default only)" in out


@pytest.mark.compile
def test_gfx942_baseline_side_by_side(capsys) -> None:
    argv = [
        "compile",
        str(CONV_GPU / "payload.mlir"),
        "--strategies",
        str(CONV_GPU / "strategy.py"),
        "--target",
        "gfx942",
        "--report",
        "--baseline",
        "--json",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    fields = {row["field"] for row in data["side_by_side"]}
    assert {"LDS bytes", "VGPR", "AGPR", "spills (VGPR+SGPR)", "MFMA instructions", "waves/SIMD", "pipeline"} <= fields
    assert data["baseline"]["kernels"] and data["kernels"]
    lds = next(r for r in data["side_by_side"] if r["field"] == "LDS bytes")
    assert int(lds["strategy"]) <= 65536 and int(lds["iree-default"]) > 0
    assert argv and main(argv[:-1]) == 0
    text = capsys.readouterr().out
    assert "MFMA instructions" in text and "waves/SIMD" in text and "iree-default" in text


@pytest.mark.compile
def test_json_header_and_structured_configs(capsys) -> None:
    assert (
        main(
            [
                "compile",
                str(MLP / "payload.mlir"),
                "--strategies",
                str(MLP / "strategy.py"),
                "--target",
                "cpu",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:4] == ["schema_version", "tdsl_version", "iree_version", "machine"]
    assert data["schema_version"] == SCHEMA_VERSION and data["iree_version"] == "3.13.0"
    assert data["machine"]["isa"] in ("avx512", "avx2", "neon", "generic") and data["machine"]["cpu"]
    matmul = next(d for d in data["dispatches"] if d["name"] == "mlp_dispatch_4_matmul_128x128x512_f32")
    (config,) = [c for c in matmul["lowering_configs"] if c["op"] == "linalg.matmul"]
    assert config["dialect"] == "iree_cpu" and config["fields"]["distribution"] == [64, 64, 0]


@pytest.mark.compile
def test_run_and_bench_json_carry_the_header(capsys) -> None:
    assert main(["run", str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == SCHEMA_VERSION and data["machine"]["isa"] and data["ok"]
    argv = [
        "bench",
        str(PACK / "payload.mlir"),
        "--strategies",
        str(PACK / "strategy.py"),
        "--repetitions",
        "1",
        "--min-time",
        "0.01",
        "--no-numpy",
        "--json",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == SCHEMA_VERSION and data["tdsl_version"] and data["machine"]["isa"]


@pytest.mark.compile
def test_keep_dump_keeps_and_replaces_only_its_own(tmp_path: Path, capsys) -> None:
    kept = tmp_path / "dump"
    argv = [
        "compile",
        str(MLP / "payload.mlir"),
        "--strategies",
        str(MLP / "strategy.py"),
        "--target",
        "cpu",
        "--keep-dump",
        str(kept),
    ]
    assert main([*argv, "--report", "--baseline"]) == 0
    assert f"executable dump: {kept}" in capsys.readouterr().out
    assert (kept / DUMP_MARKER).is_file() and len(list(kept.glob("configured_module_*.mlir"))) == 5
    assert len(list((kept / "iree-default").glob("configured_module_*.mlir"))) == 2
    assert main(argv) == 0  # replaces the earlier dump (no baseline this time)
    assert not (kept / "iree-default").exists() and (kept / DUMP_MARKER).is_file()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    capsys.readouterr()
    assert main([*argv[:-1], str(foreign)]) == 2
    assert "expected a new or empty directory" in _err_line(capsys)
    assert (foreign / "notes.txt").read_text() == "keep me"


@pytest.mark.compile
def test_unmatched_rules_of_a_ready_made_set_are_one_warning(capsys) -> None:
    argv = ["compile", str(AUTO / "payload.mlir"), "--strategies", str(AUTO / "strategy.py"), "--target", "cpu"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    warnings = captured.err.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("tdsl: warning: ") and "-v lists them" in warnings[0]
    assert "NOTHING" not in captured.out
    assert main([*argv, "-v"]) == 0
    captured = capsys.readouterr()
    assert len(captured.err.splitlines()) > 3 and "iree-compile flags: " in captured.out
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------------------
# Progress.


class _Recorder(Progress):
    def __init__(self) -> None:
        self.expected: dict[str, int] = {}
        self.steps: list[tuple[str, str]] = []
        self.done: dict[str, int] = {}
        self.closed = False

    def expect(self, task: str, steps: int) -> None:
        self.expected[task] = self.expected.get(task, 0) + steps

    def begin(self, task: str, what: str) -> None:
        self.steps.append((task, what))

    def advance(self, task: str) -> None:
        self.done[task] = self.done.get(task, 0) + 1

    def close(self) -> None:
        self.closed = True


def test_rich_progress_shows_counts_and_an_eta() -> None:
    import io

    from rich.console import Console
    from tdsl.compiler.progress import RichProgress

    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=True, width=120))
    progress.expect("compile", 2)
    with progress.step("compile", "strategy build"):
        pass
    progress.expect("compile", 1)
    with progress.step("compile", "IREE default"):
        progress._bars.refresh()  # what a terminal shows while the step runs
    progress.close()
    text = out.getvalue()
    assert "compile" in text and "ETA" in text and "2/3" in text and "IREE default" in text


@pytest.mark.compile
@pytest.mark.parametrize(("command", "builds"), [("bench", 3), ("run", 2)])
def test_progress_covers_every_compile(capsys, monkeypatch: pytest.MonkeyPatch, command: str, builds: int) -> None:
    recorder = _Recorder()
    monkeypatch.setattr(cli_builds, "progress_bars", lambda args: recorder)
    argv = [command, str(PACK / "payload.mlir"), "--strategies", str(PACK / "strategy.py")]
    if command == "bench":
        argv += ["--repetitions", "1", "--min-time", "0.01", "--no-numpy"]
    assert main(argv) == 0
    compiles = [what for task, what in recorder.steps if task == "compile"]
    assert compiles.count("strategy build") == 1 and compiles.count("IREE default") == 1
    assert len([c for c in compiles if c in ("strategy build", "IREE default", "IREE data tiling")]) == builds
    assert recorder.done["compile"] == recorder.expected["compile"] == len(compiles)
    other = "sample" if command == "bench" else "run"
    assert recorder.done[other] == recorder.expected[other] > 0 and recorder.closed


def test_no_progress_bars_off_a_terminal_or_with_q(monkeypatch: pytest.MonkeyPatch) -> None:
    from tdsl.compiler.progress import NO_PROGRESS, RichProgress

    args = cli.parser().parse_args(["compile", "p.mlir", "--target", "cpu"])
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert progress_bars(args) is NO_PROGRESS
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    monkeypatch.delenv("TERM", raising=False)
    assert isinstance(progress_bars(args), RichProgress)
    quiet = cli.parser().parse_args(["compile", "p.mlir", "--target", "cpu", "-q"])
    assert progress_bars(quiet) is NO_PROGRESS


@pytest.mark.compile
def test_reported_paths_exist_after_return(tmp_path: Path, capsys) -> None:
    """The flags a report shows name files that still exist (kept scripts), or only file
    names when the scripts' temporary directory is gone."""
    argv = ["compile", str(MLP / "payload.mlir"), "--strategies", str(MLP / "strategy.py"), "--target", "cpu", "--json"]
    assert main(argv) == 0
    flags = json.loads(capsys.readouterr().out)["flags"]
    assert "--iree-codegen-tuning-spec-path=tuning_spec.mlir" in flags
    kept = tmp_path / "dump"
    assert main([*argv, "--keep-dump", str(kept)]) == 0
    data = json.loads(capsys.readouterr().out)
    paths = [Path(f.split("=", 1)[1]) for f in data["flags"] if f.endswith(".mlir")]
    assert len(paths) == 2 and all(p.is_file() and p.parent == (kept / "scripts").resolve() for p in paths)
    assert Path(data["dump_dir"]) == kept
