"""Quantized and integer matmuls as ONNX frontends write them (tests/quantized_models.py,
committed under tests/payloads/onnx/): QLinearMatMul (u8 / i8, 2-D and 3-D activations),
MatMulInteger with and without zero points, quantize_static / quantize_dynamic linears next
to a float MatMul. The op listing gives the right roles, element types and matchers that
select exactly the quantized op; run agrees with onnxruntime (integer results exact,
quantized ones within a quantization step); bench runs; bad input is one line, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import quantized_models as qm
import tdsl
from tdsl import (
    AllOf,
    AmdGpuTarget,
    ContractionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    OpNameMatch,
    Rule,
    StrategySet,
    bindings,
)
from tdsl.cli import main
from tdsl.compiler.ops import list_dispatches, python_source
from tdsl.compiler.phases import ir_after
from tdsl.errors import ArgumentError, StrategyError
from tdsl.measure.numerics import StepComparison
from tdsl.programs import reference
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.onnx_import import import_fixes
from tdsl.programs.quantization import output_steps, quantization_roles
from tdsl.programs.reference import onnxruntime_inexact, onnxruntime_integer_matmul_error, onnxruntime_reference
from tdsl.programs.signatures import Arg, Signature
from tdsl.strategies.cpu import auto
from tdsl.strategies.cpu.quantized import i64_accumulator_tiles
from tdsl.strategies.gpu.chooser import choose_contraction
from tdsl.strategies.gpu.problems import Contraction

ONNX_DIR = Path(__file__).resolve().parent.parent / "payloads" / "onnx"
EMPTY = StrategySet(name="iree_default", targets=[CpuTarget()], rules=[])


@pytest.fixture(autouse=True)
def _extras(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    pytest.importorskip("onnxruntime", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    monkeypatch.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "tdsl-cache"))


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tdsl: error: "), err
    return err[len("tdsl: error: ") : -1]


# --------------------------------------------------------------------------------------
# Models, roles, steps, import fixes (no compiler).


@pytest.mark.parametrize("name", sorted(qm.SMALL))
def test_committed_models_are_what_the_builder_writes(name: str) -> None:
    assert (ONNX_DIR / f"{name}.onnx").read_bytes() == qm.SMALL[name]().SerializeToString()


def test_inputs_follow_their_quantization_roles(tmp_path: Path) -> None:
    """Scales and zero points that are graph inputs (as in ONNX's own node tests) get
    positive scales and zero points near the middle of their type; quantized tensors span
    their type."""
    import onnx

    onnx.save(_qlinear_all_inputs(), tmp_path / "q.onnx")
    model = onnx.load(tmp_path / "q.onnx")
    roles = quantization_roles(model, {i.name for i in model.graph.input})
    assert roles == {
        "a": "quantized",
        "a_scale": "scale",
        "a_zero_point": "zero_point",
        "b": "quantized",
        "b_scale": "scale",
        "b_zero_point": "zero_point",
        "y_scale": "scale",
        "y_zero_point": "zero_point",
    }
    args = {a.name: a for a in _signature(model, roles).inputs}
    a, a_scale, a_zp, b, _, b_zp, _, _ = make_inputs(_signature(model, roles), seed=0)
    assert a.dtype == np.uint8 and a.min() < 16 and a.max() > 240
    assert b.dtype == np.int8 and b.min() < -112 and b.max() > 112
    assert a_scale.dtype == np.float32 and 0 < a_scale.min() and a_scale.max() < 0.05
    assert 96 <= int(a_zp) <= 160 and -32 <= int(b_zp) <= 32
    with pytest.raises(
        ArgumentError,
        match=r"^--input-range a_scale=-1:1: a_scale is a quantization scale; expected positive bounds, received -1:1$",
    ):
        make_inputs(_signature(model, roles), ranges={"a_scale": (-1.0, 1.0)})
    assert args["a"].role == "quantized"


def test_output_steps_of_quantizing_ops() -> None:
    import onnx

    assert output_steps(onnx.load(ONNX_DIR / "qlinear_matmul_u8.onnx")) == {"y": 1.0}
    static = output_steps(onnx.load(ONNX_DIR / "static_linear_u8.onnx"))
    assert list(static) == ["y"] and 0 < static["y"] < 0.1  # DequantizeLinear's scale; z is a float MatMul
    assert output_steps(onnx.load(ONNX_DIR / "matmul_integer.onnx")) == {}  # integer results are exact
    assert output_steps(onnx.load(ONNX_DIR / "dynamic_linear.onnx")) == {}


@pytest.mark.parametrize(
    "name, note",
    [
        (
            "qlinear_matmul_i8_3d",
            "1 QLinearMatMul of a 3-D activation by a 2-D weight imported as 2-D between Reshapes",
        ),
        ("matmul_integer", "1 MatMulInteger of u8 by u8 without zero points imported with zero points 0"),
    ],
)
def test_import_fixes_are_equivalent_graphs(name: str, note: str, tmp_path: Path) -> None:
    """The rewritten graph (what IREE imports) computes what the model computes."""
    import onnx

    model = onnx.load(ONNX_DIR / f"{name}.onnx")
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    notes = import_fixes(fixed)
    assert len(notes) == 1 and notes[0].startswith(note)
    onnx.checker.check_model(fixed)
    roles = quantization_roles(model, {i.name for i in model.graph.input})
    inputs = make_inputs(_signature(model, roles), seed=1)
    onnx.save(model, tmp_path / "model.onnx")
    onnx.save(fixed, tmp_path / "fixed.onnx")
    [want], [got] = (onnxruntime_reference(tmp_path / f"{tag}.onnx", inputs) for tag in ("model", "fixed"))
    assert np.array_equal(want, got)
    assert import_fixes(onnx.load(ONNX_DIR / "matmul_integer_zp.onnx")) == []


def test_zero_point_contractions_have_contraction_roles() -> None:
    text = """
    func.func @f(%a: tensor<16x64xi8>, %b: tensor<64x32xi8>, %za: i32, %zb: i32, %o: tensor<16x32xi32>,
                 %ba: tensor<2x16x64xi8>, %bb: tensor<2x64x32xi8>, %bo: tensor<2x16x32xi32>) -> (tensor<16x32xi32>, tensor<2x16x32xi32>) {
      %r = linalg.quantized_matmul ins(%a, %b, %za, %zb : tensor<16x64xi8>, tensor<64x32xi8>, i32, i32) outs(%o : tensor<16x32xi32>) -> tensor<16x32xi32>
      %q = linalg.quantized_batch_matmul ins(%ba, %bb, %za, %zb : tensor<2x16x64xi8>, tensor<2x64x32xi8>, i32, i32)
          outs(%bo : tensor<2x16x32xi32>) -> tensor<2x16x32xi32>
      return %r, %q : tensor<16x32xi32>, tensor<2x16x32xi32>
    }"""
    mm, bmm = bindings.linalg_ops(text)
    assert (mm.kind, mm.roles, mm.loop_sizes, mm.zero_points) == (
        "contraction",
        {"batch": (), "m": (0,), "n": (1,), "k": (2,)},
        (16, 32, 64),
        ("i32", "i32"),
    )
    assert [(t.shape, t.element) for t in mm.operands] == [((16, 64), "i8"), ((64, 32), "i8"), ((16, 32), "i32")]
    assert bmm.kind == "contraction" and bmm.sizes("batch") == (2,) and bmm.sizes("k") == (64,)
    names = OpNameMatch(names="linalg.quantized_matmul")
    assert (names.loop_count(), names.operand_count()) == (3, 5)
    assert names.loop_shape() is not None and names.loop_shape().roles == ("m", "n", "k")  # type: ignore[union-attr]


@pytest.mark.parametrize("spelled", ["ui8", "si8"])
def test_signed_element_types_are_refused_with_the_signless_ones(spelled: str) -> None:
    """linalg is signless: u8 / s8 data is i8 to every matcher."""
    with pytest.raises(StrategyError) as err:
        ContractionMatch(lhs_type=spelled, rhs_type="i8", output_type="i32")  # type: ignore[arg-type]
    assert str(err.value).startswith("invalid strategy: ContractionMatch.lhs_type: expected 'f64', ")
    assert str(err.value).endswith(f"'i8', 'i4' or 'i1', received '{spelled}'")


def test_i64_accumulator_tiles_only_where_measured() -> None:
    assert i64_accumulator_tiles("avx2") == [] and i64_accumulator_tiles("neon") == []
    rules = i64_accumulator_tiles("avx512")
    assert [r.match.loop_shape().roles for r in rules] == [("m", "n", "k"), ("b", "m", "n", "k")]  # type: ignore[union-attr]
    assert all(r.optional for r in rules)
    tdsl.render(auto(isa="avx512"), "cpu")


# --------------------------------------------------------------------------------------
# The op listing and its matchers (compiles).


@pytest.mark.compile
def test_listing_shows_the_quantized_matmul_with_roles_types_and_matchers() -> None:
    program = load_program(ONNX_DIR / "static_linear_u8.onnx")
    ops = list_dispatches(program.mlir_path, CpuTarget())
    quantized = [d for d in ops.dispatches if d.graph_op is not None and d.graph_op.name == "linalg.quantized_matmul"]
    [d] = quantized
    assert d.root is not None and d.graph_op is not None
    assert (d.root.name, d.root.loop_roles(), d.root.shapes()) == (
        "linalg.matmul",
        "mnk",
        "16x64xi8, 64x32xi8 -> 16x32xi32",
    )
    assert (d.graph_op.loop_roles(), d.graph_op.shapes()) == ("mnk", "16x64xi8, 64x32xi8, i32, i32 -> 16x32xi32")
    assert python_source(d.codegen_matcher) == (  # type: ignore[arg-type]
        'ContractionMatch(lhs_type="i8", rhs_type="i8", output_type="i32", operand_layout="mk_kn", batch=[], m=[16], n=[32], k=[64])'
    )
    assert python_source(d.graph_matcher) == (  # type: ignore[arg-type]
        'AllOf(matchers=[OpNameMatch(names=["linalg.quantized_matmul"]), OperandMatch(type="tensor<16x64xi8>"), '
        'OperandMatch(operand=1, type="tensor<64x32xi8>"), OperandMatch(operand=4, type="tensor<16x32xi32>")])'
    )
    assert eval(python_source(d.graph_matcher), vars(tdsl)) == d.graph_matcher  # type: ignore[arg-type]  # noqa: S307
    listed = d.to_json()
    assert listed["graph_op"]["zero_points"] == ["i32", "i32"] and listed["graph_op"]["roles"] == {
        "batch": [],
        "m": [16],
        "n": [32],
        "k": [64],
    }
    assert [o["element_type"] for o in listed["graph_op"]["operands"]] == ["i8", "i8", "i32"]
    json.dumps(ops.to_json())


@pytest.mark.compile
def test_graph_matcher_selects_the_quantized_matmul_not_the_float_one() -> None:
    program = load_program(ONNX_DIR / "static_linear_u8.onnx")
    ops = list_dispatches(program.mlir_path, CpuTarget())
    [d] = [d for d in ops.dispatches if isinstance(d.graph_matcher, AllOf)]
    rule = Rule(target="cpu", match=d.graph_matcher, strategy=DataLayout(name="q", generalize=True))
    marked = [
        line
        for line in ir_after(
            program.mlir_path, StrategySet(name="one", targets=[CpuTarget()], rules=[rule]), "cpu", "preprocessing"
        ).splitlines()
        if 'tdsl.layout = "q"' in line
    ]
    assert len(marked) == 1 and re.search(r"ins\(.*: tensor<16x64xi8>, tensor<64x32xi8>, i32, i32\)", marked[0]), marked


@pytest.mark.compile
def test_codegen_matchers_select_exactly_their_integer_dispatch() -> None:
    """dynamic_linear: an i32 x i32 -> i64 matmul (MatMulInteger with zero points) beside a
    float MatMul of the same shape; each codegen matcher configures its own dispatch only."""
    program = load_program(ONNX_DIR / "dynamic_linear.onnx")
    ops = list_dispatches(program.mlir_path, CpuTarget())
    contractions = [d for d in ops.dispatches if isinstance(d.codegen_matcher, ContractionMatch)]
    assert sorted((d.codegen_matcher.lhs_type, d.codegen_matcher.output_type) for d in contractions) == [  # type: ignore[union-attr]
        ("f32", "f32"),
        ("i32", "i64"),
    ]
    rules = [
        Rule(
            target="cpu",
            match=d.codegen_matcher,
            strategy=CpuLowering(
                name=f"c{i}", distribution=[16, 32, 0], vector_common_parallel=[4, 16, 0], vector_reduction=[0, 0, 8]
            ),
        )
        for i, d in enumerate(contractions)
    ]
    report = tdsl.compile(program.mlir_path, StrategySet(name="each", targets=[CpuTarget()], rules=rules), "cpu")
    assert [r.dispatches for r in report.rules] == [(d.name,) for d in contractions]


@pytest.mark.compile
def test_gfx942_codegen_matchers_select_the_integer_and_the_float_matmul_apart() -> None:
    """On gfx942 both matmuls are linalg.generic at codegen; each chooser rule, selected by
    its dispatch's listed matcher, configures that dispatch only."""
    program = load_program(ONNX_DIR / "static_linear_u8.onnx")
    ops = list_dispatches(program.mlir_path, AmdGpuTarget())
    rules, names = [], []
    for i, d in enumerate(ops.dispatches):
        if d.root is None or d.root.kind != "contraction":
            continue
        lhs, rhs, out = (d.root.operands[j].element for j in (0, 1, -1))
        problem = Contraction(
            batch=(),
            m=d.root.sizes("m")[0],
            n=d.root.sizes("n")[0],
            k=d.root.sizes("k")[0],
            lhs_type=lhs,
            rhs_type=rhs,
            output_type=out,
        )
        rules.append(Rule(target="gfx942", match=d.codegen_matcher, strategy=choose_contraction(problem, f"c{i}")))
        names.append(d.name)
    assert [r.match.lhs_type for r in rules] == ["i8", "f32"]  # type: ignore[attr-defined]
    report = tdsl.compile(program.mlir_path, StrategySet(name="each", targets=[AmdGpuTarget()], rules=rules), "gfx942")
    assert [r.dispatches for r in report.rules] == [(n,) for n in names]


# --------------------------------------------------------------------------------------
# Numerics against onnxruntime and IREE default, bench, one-line errors.


@pytest.mark.compile
@pytest.mark.parametrize("name", sorted(qm.SMALL))
def test_run_agrees_with_onnxruntime(name: str) -> None:
    """Against onnxruntime wherever its integer matmul is exact on this CPU (not u8 x s8
    without VNNI: then a note says why it is not compared) and IREE default."""
    report = tdsl.run(ONNX_DIR / f"{name}.onnx", EMPTY)
    comparisons = [c for f in report.functions for c in f.comparisons]
    inexact = onnxruntime_inexact(ONNX_DIR / f"{name}.onnx")
    assert {c.reference for c in comparisons} == ({"iree-default"} if inexact else {"iree-default", "onnxruntime"})
    assert (inexact in report.notes) if inexact else not any("onnxruntime" in n for n in report.notes)
    assert report.ok and all(c.ok for c in comparisons)
    integer = [c for c in comparisons if not isinstance(c, StepComparison) and c.tolerance == 0]
    assert all(c.max_abs == 0 for c in integer)  # integer results are exact
    if name.startswith("qlinear"):
        assert all(isinstance(c, StepComparison) and c.step == 1.0 for c in comparisons)


def test_onnxruntime_probe_is_exact_where_it_says_so() -> None:
    """The probe's verdicts per operand pair: s8 x s8 and u8 x u8 exact (onnxruntime widens
    them before multiplying); u8 x s8 exact only with VNNI (checked against the CPU's flags)."""
    assert onnxruntime_integer_matmul_error("uint8", "uint8") == 0
    assert onnxruntime_integer_matmul_error("int8", "int8") == 0
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    if " avx2" in flags and "vnni" not in flags:
        assert onnxruntime_integer_matmul_error("uint8", "int8") > 0


@pytest.mark.compile
@pytest.mark.parametrize("error", [0, 7])
def test_an_inexact_onnxruntime_is_named_not_compared(error: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where onnxruntime's integer matmul for the model's operand types is not exact here,
    run compares with IREE default alone and its notes say why; elsewhere onnxruntime is a
    reference."""
    monkeypatch.setattr(reference, "onnxruntime_integer_matmul_error", lambda a, b: error)
    report = tdsl.run(
        ONNX_DIR / "matmul_integer_zp.onnx", EMPTY, check=False
    )  # trusted where it is not exact, it may differ
    references = {c.reference for f in report.functions for c in f.comparisons}
    notes = [n for n in report.notes if "onnxruntime is not compared" in n]
    if error:
        assert references == {"iree-default"} and notes == [
            "onnxruntime is not compared: its uint8 x int8 integer matmul (MatMulInteger MatMulInteger_0) is not exact on this CPU "
            "(a full-range probe was off by 7; without VNNI its kernels saturate sums of 8-bit products in int16)"
        ]
    else:
        assert "onnxruntime" in references and not notes


@pytest.mark.compile
def test_scales_and_zero_points_as_inputs_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import onnx

    onnx.save(_qlinear_all_inputs(), tmp_path / "q.onnx")
    assert main(["run", str(tmp_path / "q.onnx"), "--strategies", str(_empty_file(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert (
        "onnxruntime is not compared" if onnxruntime_inexact(tmp_path / "q.onnx") else "vs onnxruntime"
    ) in out and "FAIL" not in out
    assert (
        main(
            [
                "run",
                str(tmp_path / "q.onnx"),
                "--strategies",
                str(_empty_file(tmp_path)),
                "--input-range",
                "y_scale=0:1",
            ]
        )
        == 2
    )
    assert (
        one_line(capsys)
        == "--input-range y_scale=0:1: y_scale is a quantization scale; expected positive bounds, received 0:1"
    )


@pytest.mark.compile
def test_i64_accumulator_tiles_apply_and_stay_exact() -> None:
    report = tdsl.run(ONNX_DIR / "dynamic_linear.onnx", auto(isa="avx512"))
    applied = {r.strategy: r.dispatches for r in report.compile_report.rules}
    assert applied["i64_acc_matmul_tiles"] and report.ok


@pytest.mark.compile
def test_bench_times_a_quantized_model(tmp_path: Path) -> None:
    from tdsl.measure.peers import installed_peers

    report = tdsl.bench(ONNX_DIR / "matmul_integer_zp.onnx", EMPTY, repetitions=1, min_time_s=0.01)
    builds = {"strategy", "iree-default", "iree-data-tiling"}
    assert {row.variant for row in report.rows} == builds | set(installed_peers())
    assert all(row.median > 0 for row in report.rows)


@pytest.mark.e2e
def test_bad_quantized_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = ONNX_DIR / "matmul_integer_zp.onnx"
    strategies = _empty_file(tmp_path)
    assert main(["run", str(model), "--strategies", str(strategies), "--input-range", "A=0:300"]) == 2
    assert (
        one_line(capsys)
        == "--input-range A=0:300: outside the range of ui8: A expects bounds within 0:255, received 0:300"
    )
    np.savez(tmp_path / "x.npz", A=np.zeros((2, 8, 64), np.float32), a_zero_point=np.array(128, np.uint8))
    assert main(["run", str(model), "--strategies", str(strategies), "--inputs", str(tmp_path / "x.npz")]) == 2
    assert one_line(capsys) == f"--inputs {tmp_path / 'x.npz'}[A]: A expects ui8 (uint8), received float32"
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from tdsl import ContractionMatch, CpuLowering, CpuTarget, Rule, StrategySet\n"
        "strategies = StrategySet(name='s', targets=[CpuTarget()], rules=[Rule(target='cpu', "
        "match=ContractionMatch(lhs_type='u8', rhs_type='i8', output_type='i32'), "
        "strategy=CpuLowering(name='t', distribution=[8, 8, 0], vector_common_parallel=[8, 8, 0], vector_reduction=[0, 0, 8]))])\n"
    )
    assert main(["ops", str(model), "--target", "cpu", "--strategies", str(bad)]) == 2
    assert one_line(capsys) == (
        "invalid strategy: ContractionMatch.lhs_type: expected 'f64', 'f32', 'f16', 'bf16', 'f8E4M3FNUZ', "
        "'f8E5M2FNUZ', 'i64', 'i32', 'i16', 'i8', 'i4' or 'i1', received 'u8'"
    )


# --------------------------------------------------------------------------------------
# Helpers.


def _empty_file(tmp_path: Path) -> Path:
    path = tmp_path / "empty.py"
    path.write_text(
        "from tdsl import CpuTarget, StrategySet\nstrategies = StrategySet(name='e', targets=[CpuTarget()], rules=[])\n"
    )
    return path


def _signature(model: Any, roles: dict[str, str]) -> Signature:
    from onnx import helper

    inits = {t.name for t in model.graph.initializer}
    args = []
    for i, value in enumerate(v for v in model.graph.input if v.name not in inits):
        shape = tuple(d.dim_value for d in value.type.tensor_type.shape.dim)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type))
        element = {"uint8": "ui8", "int8": "si8", "float32": "f32", "int32": "si32"}[dtype.name]
        args.append(Arg(i, value.name, shape, element, role=roles.get(value.name)))
    return Signature("main", tuple(args), ())


def _qlinear_all_inputs() -> Any:
    """QLinearMatMul with every operand a graph input, as ONNX's node test writes it."""
    from onnx import TensorProto as T
    from onnx import helper

    names = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"]
    types = [
        (T.UINT8, [4, 32]),
        (T.FLOAT, []),
        (T.UINT8, []),
        (T.INT8, [32, 8]),
        (T.FLOAT, []),
        (T.INT8, []),
        (T.FLOAT, []),
        (T.UINT8, []),
    ]
    graph = helper.make_graph(
        [helper.make_node("QLinearMatMul", names, ["y"])],
        "qlinear_all_inputs",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in zip(names, types)],
        [helper.make_tensor_value_info("y", T.UINT8, [4, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", qm.OPSET)])
    model.ir_version = 8
    return model


@pytest.mark.compile
def test_tune_gives_the_widened_integer_matmul_a_job() -> None:
    """dynamic_linear (quantize_dynamic's MatMulInteger, i32 x i32 -> i64 at IREE's graph
    level): ``tdsl tune`` has a pinned-tile job for it (where the ready library has tiles
    on AVX-512 only, the tuner measures them on the machine at hand), and no packing space."""
    from tdsl.strategies.cpu.layout_spaces import packable
    from tdsl.tune.op_jobs import op_jobs

    program = load_program(ONNX_DIR / "dynamic_linear.onnx")
    jobs = op_jobs(list_dispatches(program.mlir_path, CpuTarget()))
    [widened] = [j for j in jobs if j.dispatch is not None and "xi64" in j.what]
    assert widened.skipped == "" and widened.dispatch is not None and widened.dispatch.graph_op is not None
    assert "no mmt4d inner tile" in packable(widened.dispatch.graph_op, widened.dispatch.graph_matcher)  # type: ignore[arg-type]
