"""Payload rewrites of the program's linalg IR (CpuTarget.channels_last_depthwise_convs: NCHW
depthwise convs computed channels-last; CpuTarget.convs_1d_as_2d: 1-D convs as unit-height
2-D convs; CpuTarget.convs_as_matmuls: 2-D convs into a zero fill, their bias added after),
with IREE default's numbers, on generated shapes, hand-written modules and real exports."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import tdsl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tdsl import CpuTarget, StrategySet
from tdsl.bindings.conv1d import conv1d_as_conv2d
from tdsl.bindings.conv_init import convs_into_zero
from tdsl.bindings.depthwise import depthwise_convs_channels_last
from tdsl.programs.load import load_program

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def compiled_examples(count: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A generated test that compiles: ``count`` hypothesis examples, no deadline, marked ``compile``."""

    def mark(test: Callable[..., None]) -> Callable[..., None]:
        configured = settings(
            max_examples=count, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
        )(test)
        return pytest.mark.compile(configured)

    return mark


def depthwise(
    c: int, h: int, w: int, k: int, stride: int, dilation: int, element: str = "f32", acc: str = "f32", pad: int = 0
) -> str:
    """A function with one NCHW depthwise conv, as iree-import-onnx writes it: a filled init,
    the image zero-padded by ``pad`` on each side (a ``tensor.pad``) when ``pad`` > 0."""
    ph, pw = h + 2 * pad, w + 2 * pad
    oh, ow = (ph - dilation * (k - 1) - 1) // stride + 1, (pw - dilation * (k - 1) - 1) // stride + 1
    zero = "0.0" if acc.startswith("f") else "0"
    image = "%x"
    padding = ""
    if pad:
        image = "%p"
        padding = f"""  %pz = arith.constant {"0.0" if element.startswith("f") else "0"} : {element}
  %p = tensor.pad %x low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pz : {element}
  }} : tensor<1x{c}x{h}x{w}x{element}> to tensor<1x{c}x{ph}x{pw}x{element}>
"""
    return f"""\
func.func @dw(%x: tensor<1x{c}x{h}x{w}x{element}>, %f: tensor<{c}x{k}x{k}x{element}>) -> tensor<1x{c}x{oh}x{ow}x{acc}> {{
  %zero = arith.constant {zero} : {acc}
  %e = tensor.empty() : tensor<1x{c}x{oh}x{ow}x{acc}>
  %init = linalg.fill ins(%zero : {acc}) outs(%e : tensor<1x{c}x{oh}x{ow}x{acc}>) -> tensor<1x{c}x{oh}x{ow}x{acc}>
{padding}  %y = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<{dilation}> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}}
    ins({image}, %f : tensor<1x{c}x{ph}x{pw}x{element}>, tensor<{c}x{k}x{k}x{element}>) outs(%init : tensor<1x{c}x{oh}x{ow}x{acc}>) -> tensor<1x{c}x{oh}x{ow}x{acc}>
  return %y : tensor<1x{c}x{oh}x{ow}x{acc}>
}}
"""


def runs_like_iree_default(payload: Path, text: str, target: CpuTarget, note: str) -> None:
    """``text`` written to ``payload`` and run with ``target``'s knobs: the numbers match IREE
    default's and the compile report notes ``note``."""
    payload.write_text(text)
    report = tdsl.run(payload, StrategySet(name="rewritten", targets=[target], rules=[]))
    assert report.ok
    assert any(note in n for n in report.compile_report.notes), report.compile_report.notes


def test_the_rewrite_keeps_the_body_and_transposes_around_a_channels_last_generic() -> None:
    text, count = depthwise_convs_channels_last(depthwise(8, 9, 11, 3, 2, 1, "i8", "i32"))
    assert count == 1
    assert "depthwise_conv_2d_nchw_chw" not in text
    # i8 x i8 -> i32: the extensions of the named op's body move into the generic.
    assert text.count("arith.extsi") == 2 and "arith.muli" in text and "arith.addi" in text
    assert "permutation = [0, 2, 3, 1]" in text and "permutation = [1, 2, 0]" in text
    assert "permutation = [0, 3, 1, 2]" in text
    assert "(d0, d1 * 2 + d4, d2 * 2 + d5, d3)" in text


def test_a_padded_image_is_transposed_before_its_pad() -> None:
    """IREE would fold a transpose between the pad and the conv into the conv's input map
    (reading across channels again): the pad is rebuilt channels-last instead."""
    text, count = depthwise_convs_channels_last(depthwise(8, 9, 11, 3, 1, 1, pad=2))
    assert count == 1
    assert "low[0, 2, 2, 0] high[0, 2, 2, 0]" in text
    assert "tensor<1x9x11x8xf32> to tensor<1x13x15x8xf32>" in text
    assert "tensor<1x8x13x15xf32>" not in text


def test_a_module_without_a_static_nchw_depthwise_conv_is_returned_as_it_was() -> None:
    dynamic = depthwise(8, 9, 9, 3, 1, 1).replace("tensor<1x8x9x9xf32>", "tensor<?x8x9x9xf32>", 1)
    dynamic = dynamic.replace("ins(%x, %f : tensor<1x8x9x9xf32>", "ins(%x, %f : tensor<?x8x9x9xf32>")
    assert depthwise_convs_channels_last(dynamic) == (dynamic, 0)
    plain = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    assert depthwise_convs_channels_last(plain) == (plain, 0)


def test_the_knob_adds_no_flag_is_a_payload_rewrite_and_not_in_the_baseline() -> None:
    target = CpuTarget(channels_last_depthwise_convs=True)
    assert target.payload_rewrites() == ("channels_last_depthwise_convs",)
    assert target.compile_flags() == CpuTarget().compile_flags()
    assert target.baseline().payload_rewrites() == ()
    from tdsl.strategies.cpu import auto

    assert auto(isa="avx2").targets[0].channels_last_depthwise_convs
    assert "channels_last_depthwise_convs" in auto(isa="avx2").targets[0].ready_knobs
    assert not auto(isa="avx2", weights="runtime").targets[0].channels_last_depthwise_convs
    assert not auto(isa="avx512").targets[0].channels_last_depthwise_convs
    assert not auto(isa="avx2", pack_matmuls=True).targets[0].channels_last_depthwise_convs
    # 1-D convs as 2-D: for im2col, so only where im2col is on.
    assert auto(isa="avx2").targets[0].convs_1d_as_2d
    assert not auto(isa="avx2", im2col_convs=False).targets[0].convs_1d_as_2d
    assert CpuTarget(convs_1d_as_2d=True, channels_last_depthwise_convs=True).payload_rewrites() == (
        "channels_last_depthwise_convs",
        "convs_1d_as_2d",
    )


@compiled_examples(4)
@given(
    c=st.integers(1, 40),
    size=st.integers(5, 19),
    k=st.sampled_from([1, 3, 5]),
    stride=st.integers(1, 2),
    dilation=st.integers(1, 2),
    pad=st.integers(0, 2),
)
def test_generated_depthwise_convs_compute_what_iree_default_computes(
    tmp_path: Path, c: int, size: int, k: int, stride: int, dilation: int, pad: int
) -> None:
    if size < dilation * (k - 1) + 1:
        size = dilation * (k - 1) + 1
    target = CpuTarget(channels_last_depthwise_convs=True, im2col_convs=True, data_tiling=True)
    text = depthwise(c, size, size + 1, k, stride, dilation, pad=pad)
    runs_like_iree_default(
        tmp_path / f"dw_{c}_{size}_{k}_{stride}_{dilation}_{pad}.mlir",
        text,
        target,
        "1 NCHW depthwise conv(s) computed channels-last",
    )


@pytest.mark.compile
def test_auto_on_avx2_computes_an_exports_depthwise_convs_channels_last() -> None:
    """MobileNetV2's export: every depthwise conv is channels-last at codegen under auto() on
    AVX2 (its result NHWC), the report says how many were rewritten, and the outputs match
    IREE default's and onnxruntime's."""
    from tdsl.strategies.cpu import auto

    ready = auto(isa="avx2")
    program = load_program(MODELS / "mobilenet_v2" / "model.onnx")
    report = tdsl.run(program, ready)
    assert report.ok
    notes = [n for n in report.compile_report.notes if n.startswith("channels_last_depthwise_convs")]
    assert notes and "NCHW depthwise conv(s) computed channels-last" in notes[0], report.compile_report.notes
    # One per grouped Conv of the export (MobileNetV2's are all depthwise).
    import onnx

    graph = onnx.load(str(MODELS / "mobilenet_v2" / "model.onnx"), load_external_data=False).graph
    grouped = [n for n in graph.node if n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute)]
    assert grouped and notes[0].startswith(f"channels_last_depthwise_convs: {len(grouped)} ")


def conv1d(c: int, f: int, w: int, k: int, stride: int, dilation: int, pad: int) -> str:
    """A function with one NCW 1-D conv, as iree-import-onnx writes it (a filled init, the
    image zero-padded by ``pad`` on each side when ``pad`` > 0)."""
    pw = w + 2 * pad
    ow = (pw - dilation * (k - 1) - 1) // stride + 1
    image, padding = "%x", ""
    if pad:
        image = "%p"
        padding = f"""  %p = tensor.pad %x low[0, 0, {pad}] high[0, 0, {pad}] {{
  ^bb0(%i0: index, %i1: index, %i2: index):
    tensor.yield %zero : f32
  }} : tensor<1x{c}x{w}xf32> to tensor<1x{c}x{pw}xf32>
"""
    return f"""\
func.func @c1(%x: tensor<1x{c}x{w}xf32>, %f: tensor<{f}x{c}x{k}xf32>) -> tensor<1x{f}x{ow}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x{f}x{ow}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x{f}x{ow}xf32>) -> tensor<1x{f}x{ow}xf32>
{padding}  %y = linalg.conv_1d_ncw_fcw {{dilations = dense<{dilation}> : vector<1xi64>, strides = dense<{stride}> : vector<1xi64>}}
    ins({image}, %f : tensor<1x{c}x{pw}xf32>, tensor<{f}x{c}x{k}xf32>) outs(%init : tensor<1x{f}x{ow}xf32>) -> tensor<1x{f}x{ow}xf32>
  return %y : tensor<1x{f}x{ow}xf32>
}}
"""


def test_a_1d_conv_becomes_a_unit_height_2d_conv_between_reshapes() -> None:
    text, count = conv1d_as_conv2d(conv1d(16, 32, 40, 3, 2, 1, 1))
    assert count == 1
    assert "conv_1d_ncw_fcw" not in text and "linalg.conv_2d_nchw_fchw" in text
    assert "strides = dense<[1, 2]>" in text
    assert "tensor<1x16x1x42xf32>" in text and "tensor<32x16x1x3xf32>" in text
    assert "tensor.collapse_shape" in text and "-> tensor<1x32x20xf32>" in text
    assert conv1d_as_conv2d(depthwise(8, 9, 9, 3, 1, 1)) == (depthwise(8, 9, 9, 3, 1, 1), 0)


@compiled_examples(4)
@given(
    c=st.integers(1, 24),
    f=st.integers(1, 24),
    w=st.integers(9, 40),
    k=st.sampled_from([1, 3, 5]),
    stride=st.integers(1, 2),
    dilation=st.integers(1, 2),
    pad=st.integers(0, 2),
)
def test_generated_1d_convs_compute_what_iree_default_computes(
    tmp_path: Path, c: int, f: int, w: int, k: int, stride: int, dilation: int, pad: int
) -> None:
    target = CpuTarget(convs_1d_as_2d=True, im2col_convs=True, channels_last_convs=True, data_tiling=True)
    text = conv1d(c, f, w, k, stride, dilation, pad)
    runs_like_iree_default(
        tmp_path / f"c1_{c}_{f}_{w}_{k}_{stride}_{dilation}_{pad}.mlir",
        text,
        target,
        "1 1-D conv(s) computed as 2-D convs of unit height",
    )


@pytest.mark.compile
def test_auto_on_avx2_computes_an_exports_1d_convs_as_2d_convs() -> None:
    """The Whisper export's two 1-D convs (stride 1 and 2) under auto() on AVX2: rewritten,
    and the outputs match IREE default's and onnxruntime's."""
    from tdsl.strategies.cpu import auto

    report = tdsl.run(load_program(MODELS / "whisper_encoder" / "model.onnx"), auto(isa="avx2"))
    assert report.ok
    assert "convs_1d_as_2d: 2 1-D conv(s) computed as 2-D convs of unit height" in report.compile_report.notes


def conv2d(c: int, f: int, h: int, w: int, k: int, stride: int, pad: int, bias: bool = True) -> str:
    """A function with one NCHW 2-D conv as iree-import-onnx writes an ONNX ``Conv``: with a
    bias, the init is the bias broadcast over the image (else a zero fill); the image
    zero-padded by ``pad`` on each side when ``pad`` > 0."""
    ph, pw = h + 2 * pad, w + 2 * pad
    oh, ow = (ph - k) // stride + 1, (pw - k) // stride + 1
    out = f"tensor<1x{f}x{oh}x{ow}xf32>"
    image, padding = "%x", ""
    if pad:
        image = "%p"
        padding = f"""  %p = tensor.pad %x low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : tensor<1x{c}x{h}x{w}xf32> to tensor<1x{c}x{ph}x{pw}xf32>
"""
    init = (
        f"%init = linalg.broadcast ins(%b : tensor<{f}xf32>) outs(%e : {out}) dimensions = [0, 2, 3]"
        if bias
        else f"%init = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}"
    )
    return f"""\
func.func @c2(%x: tensor<1x{c}x{h}x{w}xf32>, %f: tensor<{f}x{c}x{k}x{k}xf32>, %b: tensor<{f}xf32>) -> {out} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {out}
  {init}
{padding}  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}}
    ins({image}, %f : tensor<1x{c}x{ph}x{pw}xf32>, tensor<{f}x{c}x{k}x{k}xf32>) outs(%init : {out}) -> {out}
  return %y : {out}
}}
"""


def test_a_conv_with_a_bias_starts_from_zero_and_adds_the_bias_after() -> None:
    text, count = convs_into_zero(conv2d(16, 32, 12, 10, 3, 2, 1))
    assert count == 1
    assert text.count("linalg.conv_2d_nchw_fchw") == 1 and "strides = dense<2>" in text
    assert "linalg.fill" in text and "arith.addf" in text and "linalg.broadcast" in text
    # The conv's result feeds the add, whose result is returned.
    assert text.index("linalg.conv_2d_nchw_fchw") < text.index("arith.addf")
    unbiased = conv2d(16, 32, 12, 10, 3, 2, 1, bias=False)
    assert convs_into_zero(unbiased) == (unbiased, 0)
    assert convs_into_zero(conv1d(16, 32, 40, 3, 2, 1, 1))[1] == 0


def test_convs_as_matmuls_runs_im2col_before_the_graph_level_and_splits_the_bias() -> None:
    target = CpuTarget(convs_as_matmuls=True, channels_last_convs=True, fold_batch_matmuls=True)
    pipeline = [f for f in target.compile_flags() if f.startswith("--iree-preprocessing-pass-pipeline=")]
    assert pipeline == [
        "--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last,"
        "iree-global-opt-convert-conv2d-to-img2col,iree-global-opt-convert-batch-matmul-to-matmul))"
    ]
    assert CpuTarget(convs_as_matmuls=True, convs_1d_as_2d=True).payload_rewrites() == (
        "convs_1d_as_2d",
        "convs_as_matmuls",
    )
    assert target.baseline().payload_rewrites() == () and not target.baseline().convs_as_matmuls


def test_auto_computes_convs_as_packed_matmuls_channels_first_where_it_packs_matmuls() -> None:
    from tdsl.errors import ArgumentError
    from tdsl.strategies.cpu import auto

    avx2 = auto(isa="avx2").targets[0]
    assert avx2.convs_as_matmuls and not avx2.channels_last_convs and "convs_as_matmuls" in avx2.ready_knobs
    # An explicit channels_last_convs stands; an explicit choice is the user's, not optional.
    opted = auto(isa="avx2", channels_last_convs=True, convs_as_matmuls=True).targets[0]
    assert opted.convs_as_matmuls and opted.channels_last_convs and "convs_as_matmuls" not in opted.ready_knobs
    assert not auto(isa="avx2", weights="runtime").targets[0].convs_as_matmuls
    assert not auto(isa="avx2", packed_matmuls_over_data_tiling=False).targets[0].convs_as_matmuls
    assert not auto(isa="avx512").targets[0].convs_as_matmuls
    assert auto(isa="avx512", packed_matmuls_over_data_tiling=True, convs_as_matmuls=True).targets[0].convs_as_matmuls
    with pytest.raises(ArgumentError, match=r"convs_as_matmuls=True\): expected packing rules"):
        auto(isa="avx512", convs_as_matmuls=True)


CONV_2D_SHAPES = st.tuples(
    st.integers(1, 24), st.integers(1, 40), st.integers(4, 17), st.sampled_from([1, 3, 7]), st.integers(1, 2)
)
"""(in channels, out channels, image size, kernel size, stride) of a generated 2-D conv."""


@compiled_examples(3)
@given(shape=CONV_2D_SHAPES, pad=st.integers(0, 3), channels_last=st.booleans())
def test_generated_biased_convs_packed_as_matmuls_compute_what_iree_default_computes(
    tmp_path: Path, shape: tuple[int, int, int, int, int], pad: int, channels_last: bool
) -> None:
    """Under auto()'s AVX2 packing rules over data tiling, whose mmt4d unpacks into the
    matmul's initial value (the case IREE 3.13 cannot code generate with a bias there)."""
    from tdsl.strategies.cpu import auto

    c, f, size, k, stride = shape
    size = max(size, k)
    ready = auto(isa="avx2", packed_matmuls_over_data_tiling=True)
    target = ready.targets[0].model_copy(update={"convs_as_matmuls": True, "channels_last_convs": channels_last})
    payload = tmp_path / f"c2_{c}_{f}_{size}_{k}_{stride}_{pad}_{channels_last}.mlir"
    payload.write_text(conv2d(c, f, size, size + 1, k, stride, pad))
    report = tdsl.run(payload, ready.model_copy(update={"targets": [target]}))
    assert report.ok
    assert "convs_as_matmuls: 1 2-D conv(s) computed into a zero fill, their initial value added after" in (
        report.compile_report.notes
    )


@pytest.mark.compile
def test_auto_on_avx2_packs_an_exports_convs_as_matmuls() -> None:
    """The ResNet example's export (six NCHW convs with biases: a 7x7 stride-2 stem, 3x3
    convs, 1x1 stride-2 shortcuts): each conv with K >= 128 is a graph-level packed mmt4d
    under auto() on AVX2 (the narrower ones stay with data tiling), its bias added after,
    and the outputs match IREE default's and onnxruntime's."""
    from tdsl.strategies.cpu import auto

    report = tdsl.run(load_program(MODELS / "resnet_hf" / "model.onnx"), auto(isa="avx2"))
    assert report.ok
    assert "convs_as_matmuls: 6 2-D conv(s) computed into a zero fill, their initial value added after" in (
        report.compile_report.notes
    )
    by_name = {rule.strategy: rule for rule in report.compile_report.rules}
    packed = by_name["avx2_f32_f32_mk_kn"].dispatches
    # The stem (K = 3x7x7) and the three 3x3 convs (K = 144, 144, 288).
    assert sorted(name.split("mmt4d_")[1].split("x6x16x1")[0].split("x")[2] for name in packed) == [
        "144",
        "144",
        "147",
        "288",
    ], packed
    assert set(packed) <= set(by_name["avx2_mmt4d_blocking"].dispatches)
