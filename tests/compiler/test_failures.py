"""Failure modes: each gives a clear message, a non-zero exit and no partial output."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import ContractionMatch, CpuLowering, Rule, StrategySet, compile
from tdsl.cli import main
from tdsl.compiler.iree_compile import CompileFailed, parse_diagnostics, run_iree_compile
from tdsl.compiler.options import CompileOptions
from tdsl.errors import RenderError, StrategyNotApplied
from tdsl.render import verify

ROOT = Path(__file__).resolve().parent.parent.parent
PACK = ROOT / "examples" / "matmul_pack"
CPU = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
]


@pytest.fixture(autouse=True)
def _failure_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Compiler failures keep their evidence here, not in the system's temporary directory."""
    where = tmp_path_factory.mktemp("failures")
    monkeypatch.setenv("TDSL_FAILURE_DIR", str(where))
    return where


def test_verification_error_shows_numbered_script_and_field() -> None:
    text = (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {\n"
        '    %p = transform.structured.pack_greedily %root matmul_packed_sizes = [8, 16, 32] matmul_inner_dims_order = [0, 1, 1] : (!transform.any_op) -> !transform.op<"linalg.generic"> loc("mm.pack")\n'
        '    transform.yield loc("mm")\n'
        '  } loc("mm")\n'
        "}\n"
    )
    with pytest.raises(RenderError, match=r"\(strategy field mm\.pack\):\n  error: .*not a valid permutation") as err:
        verify(text, "test")
    assert err.value.field == "mm.pack" and err.value.line == 3
    assert ">3 |     %p = transform.structured.pack_greedily" in str(err.value)


def test_syntax_error_maps_the_line_to_the_next_location() -> None:
    text = 'module attributes {transform.with_named_sequence} {\n  transform.named_sequence @m(%r: !transform.any_op {transform.readonly}) {\n    transform.bogus %r loc("s.tiling[1]")\n    transform.yield loc("s")\n  } loc("s")\n}\n'
    with pytest.raises(RenderError, match=r"strategy field s\.tiling\[1\]") as err:
        verify(text, "test")
    assert err.value.line == 3


def test_payload_that_does_not_parse(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    out = tmp_path / "m.vmfb"
    with pytest.raises(CompileFailed, match=r"iree-compile failed \(exit 1\)") as err:
        compile(bad, PACK / "strategy.py", "cpu", out)
    assert err.value.result is not None and err.value.result.errors
    assert list(tmp_path.iterdir()) == [bad]


def test_broken_library_is_an_error_even_when_iree_compile_exits_0(tmp_path: Path) -> None:
    library = tmp_path / "lib.mlir"
    library.write_text("module attributes {transform.with_named_sequence} { transform.bogus }\n")
    out = tmp_path / "m.vmfb"
    with pytest.raises(CompileFailed, match="exited 0 but printed errors|Failed to load transform library") as err:
        run_iree_compile(PACK / "payload.mlir", [*CPU, f"--iree-codegen-transform-dialect-library={library}"], out)
    assert err.value.result is not None and err.value.result.returncode == 0
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_timeout_kills_the_compile_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "m.vmfb"
    with pytest.raises(CompileFailed, match=r"ran past the 0.05 s timeout"):
        run_iree_compile(PACK / "payload.mlir", CPU, out, CompileOptions(timeout_s=0.05))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.e2e
def test_strategy_that_matches_nothing_warns_and_strict_fails(tmp_path: Path, capsys) -> None:
    never = StrategySet(
        name="never",
        rules=[
            Rule(
                target="cpu",
                match=ContractionMatch(lhs_type="f16", rhs_type="f16", output_type="f32"),
                strategy=CpuLowering(name="f16_tiles", distribution=[64, 64, 0]),
            )
        ],
    )
    report = compile(PACK / "payload.mlir", never, "cpu")
    assert report.warnings() == ["rule 0 (f16_tiles, cpu_lowering) matched nothing in payload.mlir"]
    out = tmp_path / "m.vmfb"
    with pytest.raises(StrategyNotApplied, match=r"--strict: rule 0 \(f16_tiles\) matched nothing"):
        compile(PACK / "payload.mlir", never, "cpu", out, strict=True)
    assert list(tmp_path.iterdir()) == []


def test_cli_compile_failure_is_one_line_exit_2_citing_files_that_exist(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    assert main(["compile", str(bad), "--strategies", str(PACK / "strategy.py"), "--target", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tdsl: error: iree-compile failed (exit 1)")
    assert f"{bad}:1:" in err  # the payload line of the first error
    log = Path(err.rsplit("full output in ", 1)[1].strip())
    assert log.is_file() and "error:" in log.read_text()  # the whole stderr, after tdsl returned


def test_diagnostics_carry_strategy_fields() -> None:
    stderr = (
        '<unknown>:0: error: loc("mm_simt.fusion[0]"): could not find next producer to fuse into container\n'
        "mm.mlir:5:8: note: containing op\n"
        '"mm.pack": error: transform applied to the wrong op kind\n'
    )
    first, note, second = parse_diagnostics(stderr)
    assert (first.strategy_field, first.severity) == ("mm_simt.fusion[0]", "error")
    assert (
        first.describe()
        == "strategy field mm_simt.fusion[0]: error: could not find next producer to fuse into container"
    )
    assert (note.file, note.line, note.strategy_field) == ("mm.mlir", 5, None)
    assert second.strategy_field == "mm.pack"
