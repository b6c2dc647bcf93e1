"""auto()'s peeling knob on AVX2 (``CpuTarget.peel_vector_loops``): odd-size softmax and
LayerNorm rows are peeled, not masked, and stay correct against IREE default and onnxruntime."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import run
from tdsl.strategies.cpu import auto

ROOT = Path(__file__).resolve().parent.parent.parent
ODD_ROWS = ROOT / "tests" / "payloads" / "cpu" / "odd_rows.mlir"
VIT = ROOT / "examples" / "models" / "vit" / "model.onnx"


@pytest.mark.compile
def test_odd_rows_are_peeled_and_match_iree_default() -> None:
    """A softmax over rows of 197 and a LayerNorm over rows of 100 (no multiple of 8):
    every dispatch is peeled under auto() on AVX2 and the numbers agree with IREE default's."""
    report = run(ODD_ROWS, auto(isa="avx2"))
    assert report.ok, report.text()
    dispatches = report.compile_report.dispatches
    assert {d.name.split("_dispatch")[0] for d in dispatches} == {"softmax_2x37x197", "layernorm_37x100"}
    assert all(d.peeled for d in dispatches), [d.name for d in dispatches if not d.peeled]
    checked = {(c.function, cmp.reference) for c in report.functions for cmp in c.comparisons}
    assert {("softmax_2x37x197", "iree-default"), ("layernorm_37x100", "iree-default")} <= checked


@pytest.mark.compile
def test_exported_vit_softmax_is_peeled_and_matches_onnxruntime() -> None:
    """The ViT example as torch.onnx.export writes it: its 4x17x17 attention softmax and its
    17x64 LayerNorm reductions are peeled under auto() on AVX2; outputs match onnxruntime."""
    report = run(VIT, auto(isa="avx2"))
    assert report.ok, report.text()
    peeled = {d.name for d in report.compile_report.dispatches if d.peeled}
    assert any("softmax_4x17x17" in name for name in peeled), peeled
    assert any("reduction_17x64" in name for name in peeled), peeled
    assert {cmp.reference for c in report.functions for cmp in c.comparisons} >= {"onnxruntime"}


@pytest.mark.compile
def test_tdsl_ops_lists_the_peeled_dispatches_as_covered() -> None:
    """The op listing's coverage of auto() on AVX2 names the knob on the odd-row dispatches;
    auto() on AVX-512, which does not peel, covers none of them."""
    from tdsl.compiler.ops import list_dispatches

    listing = list_dispatches(ODD_ROWS, "cpu", ready=auto(isa="avx2"))
    assert [d.covered_by for d in listing.dispatches] == [("peel_vector_loops",)] * 3
    assert all(d.odd_loops for d in listing.dispatches)  # what tune's program level reads
    assert "covered by: peel_vector_loops" in listing.text()
    unpeeled = list_dispatches(ODD_ROWS, "cpu", ready=auto(isa="avx512"))
    assert all("peel_vector_loops" not in d.covered_by for d in unpeeled.dispatches)


def test_tune_measures_peeling_only_where_a_loop_is_odd() -> None:
    """The program space gets a peel_vector_loops choice where the listing found an odd
    loop; elsewhere peeling builds the same code and doubles nothing."""
    from tdsl import CpuTarget
    from tdsl.strategies.cpu.space import program_space

    odd = [c.values for c in program_space(CpuTarget(), False, has_odd_loops=True).candidates()]
    even = [c.values for c in program_space(CpuTarget(), False).candidates()]
    assert {v["peel_vector_loops"] for v in odd} == {False, True} and len(odd) == 2 * len(even)
    assert all("peel_vector_loops" not in v for v in even)
