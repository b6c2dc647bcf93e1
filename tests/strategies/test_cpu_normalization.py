"""Normalization: ``pack_greedily`` brings a matmul, a transposed-B matmul, a batch matmul,
a generic contraction with its loops in (k, n, m) order and an NHWC convolution to the same
packed form: packs with inner tiles (m0 x k0) and (n0 x k0) feeding a packed contraction
whose innermost loops are (m0, n0, k0), then an unpack. Golden of the packed IR."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdsl import ContractionMatch, ConvolutionMatch, CpuTarget, DataLayout, PackGreedily, Rule, StrategySet

PAYLOAD = Path(__file__).resolve().parent.parent / "payloads" / "cpu" / "normalization.mlir"

NORMALIZE = StrategySet(
    name="normalize",
    targets=[CpuTarget(ukernels="none")],
    rules=[
        Rule(
            target="cpu",
            match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32"),
            strategy=DataLayout(name="packed", pack=PackGreedily(matmul_packed_sizes=[8, 16, 4])),
        ),
        Rule(
            target="cpu",
            match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32"),
            strategy=DataLayout(name="packed_conv", pack=PackGreedily(matmul_packed_sizes=[8, 16, 4])),
        ),
    ],
)

INNER = '"parallel", "parallel", "reduction"]'


def _form(function: str, lhs_dims: str, rhs_dims: str, out_dims: str) -> str:
    """FileCheck lines of one function's packed form."""
    return (
        f"CHECK-LABEL: func.func @{function}(\n"
        f"CHECK: linalg.pack %arg0 inner_dims_pos = [{lhs_dims}] inner_tiles = [8, 4]\n"
        f"CHECK: linalg.pack %arg1 inner_dims_pos = [{rhs_dims}] inner_tiles = [16, 4]\n"
        f"CHECK: linalg.pack {{{{.*}}}} inner_dims_pos = [{out_dims}] inner_tiles = [8, 16]\n"
        f"CHECK: linalg.generic {{{{.*}}}}{INNER}\n"
        f"CHECK: linalg.unpack {{{{.*}}}} inner_dims_pos = [{out_dims}] inner_tiles = [8, 16]\n"
    )


def test_pack_greedily_brings_five_contraction_forms_to_one_packed_form(golden) -> None:
    text = golden.check_ir(
        PAYLOAD,
        NORMALIZE,
        "cpu",
        "preprocessing",
        "../goldens/cpu/normalization.preprocessing.mlir",
        mode="interpreter",
    )
    golden.filecheck(
        text,
        _form("matmul", "0, 1", "1, 0", "0, 1")
        + _form("matmul_transposed_b", "0, 1", "0, 1", "0, 1")
        + _form("batch_matmul", "1, 2", "2, 1", "1, 2")
        + _form("generic_knm", "0, 1", "1, 0", "0, 1")
        + _form("conv", "0, 3", "3, 2", "0, 3"),
    )
    functions = text.split("func.func @")[1:]
    packed = {f.split("(")[0]: next(line for line in f.splitlines() if "linalg.generic" in line) for f in functions}
    # The (k, n, m)-ordered generic becomes exactly the matmul's packed contraction.
    assert packed["generic_knm"] == packed["matmul"]


@pytest.mark.compile
def test_the_packed_forms_compute_what_the_originals_do() -> None:
    from tdsl import run

    report = run(PAYLOAD, NORMALIZE)
    assert report.ok, report.text()
