"""Real programs (tdsl.programs): .onnx models as torch.onnx.export writes them, the
torch/ONNX-dialect MLIR of iree-import-onnx, signatures with !torch.vtensor types, inputs
that respect integer semantics, and the example models (examples/models/) compiled with
plain iree-compile for llvm-cpu, run, and compared with onnxruntime."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tdsl
from tdsl import CpuTarget, bindings
from tdsl.compiler.iree_compile import run_iree_compile
from tdsl.errors import ArgumentError, PayloadError
from tdsl.measure.execute import compare, invoke
from tdsl.programs.inputs import load_inputs, make_inputs, parse_input_ranges
from tdsl.programs.load import DynamicShapeError, load_program, parse_dims
from tdsl.programs.program import MissingExtra
from tdsl.programs.reference import onnxruntime_reference
from tdsl.programs.signatures import Arg, Signature, as_declared, numpy_dtype, signatures
from tdsl.programs.weights import STRIP_MARKER, refill_weights

MODELS_DIR = Path(__file__).resolve().parent.parent.parent / "examples" / "models"
MODELS = ["bert", "gpt2_block", "resnet"]


def _onnx() -> Any:
    return pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Imports go to a cache of this module's own (not the user's ~/.cache/tdsl)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.mktemp("tdsl-cache")))
        yield


# --------------------------------------------------------------------------------------
# Types.


@pytest.mark.parametrize(
    "text, shape, element",
    [
        ("!torch.vtensor<[1,128],si64>", (1, 128), "si64"),
        ("!torch.vtensor<[?,3],f32>", (None, 3), "f32"),
        ("!torch.vtensor<[-1,3,4],bf16>", (None, 3, 4), "bf16"),
        ("!torch.vtensor<[],i1>", (), "i1"),
        ("!torch.vtensor<*,ui8>", None, "ui8"),
        ("!torch.vtensor<[2, 3],si8>", (2, 3), "si8"),
    ],
)
def test_vtensor_types_parse(text: str, shape: Any, element: str) -> None:
    assert bindings.parse_vtensor_type(text) == (shape, element)


@pytest.mark.parametrize(
    "text", ["tensor<1x2xf32>", "!torch.vtensor<[1,x],f32>", "!torch.tensor<[1],f32>", "!torch.vtensor<[1]>"]
)
def test_other_type_text_is_refused(text: str) -> None:
    with pytest.raises(PayloadError, match="expected a !torch.vtensor"):
        bindings.parse_vtensor_type(text)


def test_function_types_read_torch_and_builtin_signatures() -> None:
    text = """
    func.func @main_graph(%arg0: !torch.vtensor<[1,64],si64>, %arg1: !torch.vtensor<[1,64],i1>, %arg2: !torch.vtensor<[?,4],ui8>)
        -> !torch.vtensor<[1,64],f32> {
      %0 = torch.operator "onnx.Cast"(%arg0) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1,64],si64>) -> !torch.vtensor<[1,64],f32>
      return %0 : !torch.vtensor<[1,64],f32>
    }
    func.func @plain(%a: tensor<2x?xi64>) -> tensor<2x?xi64> { return %a : tensor<2x?xi64> }
    func.func private @hidden(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }
    """
    main, plain = bindings.function_types(text)
    assert main.name == "main_graph" and plain.name == "plain"
    assert [(t.dialect, t.shape, t.element) for t in main.inputs] == [
        ("torch", (1, 64), "si64"),
        ("torch", (1, 64), "i1"),
        ("torch", (None, 4), "ui8"),
    ]
    assert (main.results[0].shape, main.results[0].element) == ((1, 64), "f32")
    assert (plain.inputs[0].dialect, plain.inputs[0].shape, plain.inputs[0].element) == ("builtin", (2, None), "i64")


@pytest.mark.parametrize(
    "element, dtype",
    [
        ("si64", np.int64),
        ("i64", np.int64),
        ("si8", np.int8),
        ("ui8", np.uint8),
        ("i1", np.bool_),
        ("f16", np.float16),
        ("f32", np.float32),
    ],
)
def test_element_types_map_to_numpy(element: str, dtype: Any) -> None:
    assert numpy_dtype(element) == np.dtype(dtype)


def test_unknown_element_type_is_refused() -> None:
    with pytest.raises(PayloadError, match="f8E4M3FN has no numpy dtype"):
        numpy_dtype("f8E4M3FN")


def test_unsigned_results_are_reinterpreted() -> None:
    sig = Signature("f", (), (Arg(0, "q", (3,), "ui8"), Arg(1, "m", (3,), "i1"), Arg(2, "x", (3,), "f32")))
    q, m, x = as_declared(
        [np.array([-1, 2, -128], np.int8), np.array([1, 0, 1], np.int8), np.zeros(3, np.float32)], sig
    )
    assert q.dtype == np.uint8 and q.tolist() == [255, 2, 128]
    assert m.dtype == np.bool_ and m.tolist() == [True, False, True]
    assert x.dtype == np.float32


# --------------------------------------------------------------------------------------
# Options and inputs.


def test_dims_and_ranges_parse() -> None:
    assert parse_dims(["batch=2", "arg0.1=128"]) == {"batch": 2, "arg0.1": 128}
    assert parse_input_ranges(["input_ids=0:99", "1=-0.5:0.5", "arg2=1e-3:2"]) == {
        "input_ids": (0.0, 99.0),
        "1": (-0.5, 0.5),
        "arg2": (1e-3, 2.0),
    }


@pytest.mark.parametrize("spec", ["batch", "batch=0", "batch=-1", "=3", "batch=2.5"])
def test_bad_dims_are_refused(spec: str) -> None:
    with pytest.raises(ArgumentError, match="--dim expects NAME=SIZE"):
        parse_dims([spec])


@pytest.mark.parametrize("spec", ["x", "x=1", "x=2:1", "x=a:b", "=0:1", "x=0:inf"])
def test_bad_ranges_are_refused(spec: str) -> None:
    with pytest.raises(ArgumentError, match="--input-range expects ARG=LO:HI"):
        parse_input_ranges([spec])


SIG = Signature(
    "main_graph",
    (
        Arg(0, "input_ids", (4, 64), "si64", bound=30),
        Arg(1, "attention_mask", (4, 64), "si64"),
        Arg(2, "keep", (4, 64), "i1"),
        Arg(3, "x", (4, 64), "f32"),
        Arg(4, "counts", (4, 64), "si32"),
        Arg(5, "pixels", (4, 64), "ui8"),
    ),
    (Arg(0, "out", (4, 64), "f32"),),
)


def test_inputs_respect_integer_semantics() -> None:
    ids, mask, keep, x, counts, pixels = make_inputs(SIG, seed=3)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < 30 and len(np.unique(ids)) > 20
    assert mask.dtype == np.int64 and set(np.unique(mask)) == {0, 1}
    assert keep.dtype == np.bool_ and set(np.unique(keep)) == {False, True}
    assert x.dtype == np.float32 and -1 <= x.min() < -0.9 and 0.9 < x.max() < 1
    assert counts.dtype == np.int32 and counts.min() >= 0 and counts.max() <= 7
    assert pixels.dtype == np.uint8 and pixels.max() <= 7
    again = make_inputs(SIG, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(again, [ids, mask, keep, x, counts, pixels]))
    assert not np.array_equal(make_inputs(SIG, seed=4)[0], ids)


def test_input_ranges_by_name_index_and_argn() -> None:
    ids, mask, _, x, counts, pixels = make_inputs(
        SIG,
        seed=0,
        ranges={"input_ids": (5, 6), "arg3": (2.0, 3.0), "4": (-3, -3), "pixels": (200, 255), "attention_mask": (1, 1)},
    )
    assert set(np.unique(ids)) == {5, 6}  # integer ranges include both ends
    assert 2.0 <= x.min() and x.max() < 3.0
    assert set(np.unique(counts)) == {-3}
    assert pixels.min() >= 200 and pixels.dtype == np.uint8
    assert set(np.unique(mask)) == {1}


@pytest.mark.parametrize(
    "ranges, message",
    [
        ({"nope": (0, 1)}, "has no argument 'nope'; its arguments: input_ids \\(arg0\\), attention_mask"),
        ({"arg9": (0, 1)}, "has no argument 'arg9'"),
        ({"input_ids": (0.5, 3)}, "input_ids is si64; expected integer bounds"),
        ({"keep": (0, 2)}, "keep is i1; expected bounds within 0:1"),
        ({"pixels": (-1, 3)}, "outside the range of ui8"),
    ],
)
def test_bad_input_ranges_name_the_argument(ranges: dict[str, tuple[float, float]], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        make_inputs(SIG, ranges=ranges)


SMALL = Signature("f", (Arg(0, "input_ids", (2, 3), "si64"), Arg(1, "x", (2, 3), "f32")), (Arg(0, "y", (2, 3), "f32"),))


def test_npz_inputs_by_name_argn_and_position(tmp_path: Path) -> None:
    ids, x = np.arange(6, dtype=np.int32).reshape(2, 3), np.ones((2, 3), np.float32)
    for name, arrays in [("names", {"input_ids": ids, "x": x}), ("argn", {"arg0": ids, "arg1": x})]:
        np.savez(tmp_path / f"{name}.npz", **arrays)
        got = load_inputs([tmp_path / f"{name}.npz"], SMALL)
        assert got[0].dtype == np.int64 and got[0].tolist() == ids.tolist() and np.array_equal(got[1], x)
    np.savez(tmp_path / "positional.npz", ids, x)
    assert load_inputs([tmp_path / "positional.npz"], SMALL)[0].tolist() == ids.tolist()


def test_npy_inputs_in_order(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros((2, 3), np.int64))
    np.save(tmp_path / "b.npy", np.ones((2, 3), np.float32))
    a, b = load_inputs([tmp_path / "a.npy", tmp_path / "b.npy"], SMALL)
    assert a.dtype == np.int64 and b.dtype == np.float32
    with pytest.raises(ArgumentError, match="takes 2 arguments, received 1 .npy files"):
        load_inputs([tmp_path / "a.npy"], SMALL)


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"input_ids": np.zeros((2, 3), np.int64)}, "no array for argument x \\(arg1\\); the archive holds input_ids"),
        (
            {"input_ids": np.zeros((2, 3), np.int64), "x": np.zeros((2, 3), np.float32), "z": np.zeros(1)},
            "arrays z name no argument",
        ),
        (
            {"input_ids": np.zeros((3, 2), np.int64), "x": np.zeros((2, 3), np.float32)},
            "input_ids expects shape \\(2, 3\\), received \\(3, 2\\)",
        ),
        (
            {"input_ids": np.full((2, 3), 0.5), "x": np.zeros((2, 3), np.float32)},
            "input_ids expects si64 \\(int64\\), received float64",
        ),
    ],
)
def test_bad_npz_inputs_are_refused(tmp_path: Path, arrays: dict[str, np.ndarray], message: str) -> None:
    np.savez(tmp_path / "in.npz", **arrays)
    with pytest.raises(ArgumentError, match=message):
        load_inputs([tmp_path / "in.npz"], SMALL)


# --------------------------------------------------------------------------------------
# Loading programs: dynamic dimensions, missing extras.


def _dynamic_model(path: Path) -> Path:
    onnx = _onnx()
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None, 8])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_a_dynamic_onnx_dimension_names_its_fix(tmp_path: Path, cache: None) -> None:
    model = _dynamic_model(tmp_path / "dyn.onnx")
    with pytest.raises(DynamicShapeError) as err:
        load_program(model)
    assert str(err.value) == (
        "input 'x' (arg0): dimension 0 is dynamic ('batch'); tdsl compiles static shapes: pass --dim batch=SIZE "
        "(1 more dynamic: arg0.1)"
    )
    with pytest.raises(
        DynamicShapeError, match="input 'x' \\(arg0\\): dimension 1 is dynamic; .* pass --dim arg0.1=SIZE$"
    ):
        load_program(model, dims={"batch": 2})


def test_onnx_dimensions_are_set_by_dim_param_or_position(tmp_path: Path, cache: None) -> None:
    model = _dynamic_model(tmp_path / "dyn.onnx")
    for dims in ({"batch": 2, "arg0.1": 5}, {"x.0": 2, "x.1": 5}):
        program = load_program(model, dims=dims)
        [sig] = signatures(program)
        assert program.kind == "onnx" and sig.inputs[0].name == "x" and sig.inputs[0].shape == (2, 5, 8)
        assert sig.results[0].shape == (2, 5, 8) and sig.results[0].name == "y"
        assert program.onnx_path is not None and program.onnx_path != model
        assert any("dimensions set" in n for n in program.notes)


@pytest.mark.parametrize(
    "dims, message",
    [
        (
            {"batch": 2, "arg0.1": 5, "seq": 3},
            "--dim seq=3: the model has no such dimension; its dynamic input dimensions: batch, arg0.1",
        ),
        ({"batch": 2, "arg0.1": 5, "arg0.2": 4}, "--dim arg0.2=4: dimension 2 of input 'x' is static \\(8\\)"),
    ],
)
def test_bad_onnx_dims_are_refused(tmp_path: Path, cache: None, dims: dict[str, int], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        load_program(_dynamic_model(tmp_path / "dyn.onnx"), dims=dims)


DYNAMIC_MLIR = """
func.func @relu(%arg0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %arg0, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d0) : tensor<?x8xf32>
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
"""


def test_a_dynamic_mlir_dimension_names_its_fix(tmp_path: Path, cache: None) -> None:
    path = tmp_path / "dyn.mlir"
    path.write_text(DYNAMIC_MLIR)
    with pytest.raises(
        DynamicShapeError,
        match="argument arg0 of @relu: dimension 0 is dynamic \\(tensor<\\?x8xf32>\\); .* pass --dim arg0.0=SIZE",
    ):
        load_program(path)
    with pytest.raises(
        ArgumentError, match="--dim batch=3: an .mlir program names dimensions argN.D .* dynamic dimensions: arg0.0"
    ):
        load_program(path, dims={"batch": 3})
    program = load_program(path, dims={"arg0.0": 3})
    [sig] = signatures(program)
    assert program.kind == "linalg" and sig.inputs[0].shape == (3, 8) and sig.results[0].shape == (None, 8)
    assert "tensor.cast %arg0 : tensor<3x8xf32> to tensor<?x8xf32>" in program.text()


@pytest.mark.compile
def test_a_dimension_set_in_mlir_compiles_and_runs(tmp_path: Path, cache: None) -> None:
    path = tmp_path / "dyn.mlir"
    path.write_text(DYNAMIC_MLIR)
    program = load_program(path, dims={"arg0.0": 3})
    [sig] = signatures(program)
    run_iree_compile(program.mlir_path, CpuTarget().compile_flags(), tmp_path / "m.vmfb")
    [x] = make_inputs(sig, seed=0)
    [y] = invoke(tmp_path / "m.vmfb", sig.function, [x])
    assert y.shape == (3, 8) and np.array_equal(y, np.maximum(x, 0))


def test_missing_extras_say_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    monkeypatch.setattr(bindings, "onnx_import_command", lambda: None)
    with pytest.raises(MissingExtra) as err:
        load_program(model)
    assert "\n" not in str(err.value) and str(err.value).endswith("pip install 'tdsl[onnx]'")
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    with pytest.raises(MissingExtra, match="onnxruntime package: pip install 'tdsl\\[onnx\\]'$"):
        onnxruntime_reference(model, [])


def test_other_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="does not exist"):
        load_program(tmp_path / "none.onnx")
    (tmp_path / "m.pt").write_bytes(b"x")
    with pytest.raises(ArgumentError, match="expected an .onnx model or an .mlir file, received a .pt file"):
        load_program(tmp_path / "m.pt")


# --------------------------------------------------------------------------------------
# The example models: stripped weights, refilled.


@pytest.mark.parametrize("name", MODELS)
def test_committed_models_hold_no_weights(name: str) -> None:
    onnx = _onnx()
    path = MODELS_DIR / name / "model.onnx"
    assert path.stat().st_size < 100_000
    model = onnx.load(str(path))
    assert model.opset_import[0].version == 17
    stripped = [t for t in model.graph.initializer if t.doc_string.startswith(STRIP_MARKER)]
    assert stripped and all(not t.raw_data and not t.float_data for t in stripped)
    big_floats = [
        t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT and int(np.prod(t.dims)) >= 16
    ]
    assert {t.name for t in big_floats} == {t.name for t in stripped}


def test_refilled_weights_follow_their_recipes() -> None:
    onnx = _onnx()
    from onnx import numpy_helper

    model = onnx.load(str(MODELS_DIR / "bert" / "model.onnx"))
    recipes = {t.name: json.loads(t.doc_string[len(STRIP_MARKER) :]) for t in model.graph.initializer if t.doc_string}
    again = onnx.load(str(MODELS_DIR / "bert" / "model.onnx"))
    assert refill_weights(model, seed=7) == len(recipes) == refill_weights(again, seed=7)
    assert refill_weights(model, seed=7) == 0  # nothing stripped is left
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert all(np.array_equal(values[t.name], numpy_helper.to_array(t)) for t in again.graph.initializer)
    for name, recipe in recipes.items():
        v = values[name].astype(np.float64)
        if "value" in recipe:
            assert np.all(v == recipe["value"]), name
        else:
            assert recipe["min"] <= v.min() and v.max() <= recipe["max"], name
            assert abs(v.std() - recipe["std"]) < 0.1 * recipe["std"], name
    word = values["bert.embeddings.word_embeddings.weight"]
    assert word.shape == (1024, 256) and 0.015 < word.std() < 0.025  # BERT's N(0, 0.02)


# --------------------------------------------------------------------------------------
# End to end: import, signatures, inputs, plain iree-compile for llvm-cpu, run, onnxruntime.


EXPECTED = {
    "bert": (
        ["input_ids: 1x64xsi64", "attention_mask: 1x64xsi64", "token_type_ids: 1x64xsi64"],
        {"input_ids": 1024, "token_type_ids": 2},
        ["last_hidden_state: 1x64x256xf32", "pooler_output: 1x256xf32"],
    ),
    "gpt2_block": (["input_ids: 1x64xsi64"], {"input_ids": 1024}, ["hidden_states: 1x64x256xf32"]),
    "resnet": (["image: 1x3x64x64xf32"], {}, ["logits: 1x10xf32"]),
}


@pytest.mark.compile
@pytest.mark.parametrize("name", MODELS)
def test_example_model_matches_onnxruntime(name: str, tmp_path: Path, cache: None) -> None:
    _onnx()
    pytest.importorskip("onnxruntime")
    program = load_program(MODELS_DIR / name / "model.onnx", weights_seed=0)
    assert program.kind == "onnx" and "!torch.vtensor<" in program.text()
    assert any("stripped weight tensors drawn from seed 0" in n for n in program.notes)
    [sig] = signatures(program)
    inputs_, bounds, results = EXPECTED[name]
    assert sig.function == "main_graph"
    assert [a.describe() for a in sig.inputs] == inputs_ and [a.describe() for a in sig.results] == results
    assert {a.name: a.bound for a in sig.inputs if a.bound is not None} == bounds
    inputs = make_inputs(sig, seed=1)
    if name == "bert":
        assert set(np.unique(inputs[1])) == {0, 1} and set(np.unique(inputs[2])) <= {0, 1} and inputs[0].max() < 1024
    reference = onnxruntime_reference(program.onnx_path or "", inputs)
    vmfb = tmp_path / f"{name}.vmfb"
    run_iree_compile(program.mlir_path, CpuTarget().compile_flags(), vmfb)
    results_ = as_declared(invoke(vmfb, sig.function, inputs), sig)
    assert len(results_) == len(reference) == len(sig.results)
    for i, (out, ref, arg) in enumerate(zip(results_, reference, sig.results)):
        assert np.isfinite(ref).all() and ref.std() > 1e-3  # weights refilled at a sane scale
        check = compare(out, ref, arg.element, "onnxruntime", i)
        assert check.ok, check


@pytest.mark.compile
def test_torch_dialect_mlir_loads_as_it_is(cache: None) -> None:
    """The .mlir that iree-import-onnx wrote is a program of its own (kind torch, arguments
    argN: the MLIR keeps no ONNX names); its compile report counts its launches."""
    _onnx()
    imported = load_program(MODELS_DIR / "resnet" / "model.onnx")
    program = load_program(imported.mlir_path)
    [sig] = signatures(program)
    assert program.kind == "torch" and program.onnx_path is None
    assert [a.describe() for a in sig.inputs] == ["arg0: 1x3x64x64xf32"]
    report = tdsl.compile(program.mlir_path, None, "cpu")
    assert report.launches is not None and 1 <= len(report.dispatches) <= report.launches


@pytest.mark.compile
def test_bool_inputs_and_unsigned_results(tmp_path: Path, cache: None) -> None:
    """i1 inputs are fed as numpy bool; IREE returns a ui8 result as an int8 buffer, which
    as_declared reinterprets; both agree with onnxruntime exactly."""
    onnx = _onnx()
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto as T
    from onnx import helper

    graph = helper.make_graph(
        [
            helper.make_node("Where", ["keep", "x", "zero"], ["y"]),
            helper.make_node("Cast", ["y"], ["q"], to=T.UINT8),
            helper.make_node("Add", ["q", "pixels"], ["sum"]),
            helper.make_node("Not", ["keep"], ["drop"]),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", T.FLOAT, [2, 8]),
            helper.make_tensor_value_info("keep", T.BOOL, [2, 8]),
            helper.make_tensor_value_info("pixels", T.UINT8, [2, 8]),
        ],
        [helper.make_tensor_value_info("sum", T.UINT8, [2, 8]), helper.make_tensor_value_info("drop", T.BOOL, [2, 8])],
        initializer=[helper.make_tensor("zero", T.FLOAT, [], [0.0])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "m.onnx"))
    program = load_program(tmp_path / "m.onnx")
    [sig] = signatures(program)
    assert [a.describe() for a in sig.inputs] == ["x: 2x8xf32", "keep: 2x8xi1", "pixels: 2x8xui8"]
    inputs = make_inputs(sig, seed=0, ranges={"x": (0, 100), "pixels": (150, 255)})
    run_iree_compile(program.mlir_path, CpuTarget().compile_flags(), tmp_path / "m.vmfb")
    raw = invoke(tmp_path / "m.vmfb", sig.function, inputs)
    assert raw[0].dtype == np.int8  # the runtime's view of ui8
    total, drop = as_declared(raw, sig)
    ref_total, ref_drop = onnxruntime_reference(tmp_path / "m.onnx", inputs)
    assert total.dtype == np.uint8 and np.array_equal(total, ref_total)
    assert drop.dtype == np.bool_ and np.array_equal(drop, ref_drop)
