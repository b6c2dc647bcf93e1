"""Tunes ONNX models with ``tdsl tune`` and prints, per model, the emitted program against
IREE default and IREE data tiling, measured side by side in the tuning's model pass
(interleaved rounds, medians), the numerics verdict and the wall time of the tuning.

Without model paths it tunes models it generates with ``onnx.helper`` (seeded weights, not
in the repository): shapes and operators as frontends export them, none of the example
models' -- an MLP of Gemm + Relu layers (transB), an f16 MLP on a 3-D activation (batch-1
batch matmuls), batched attention with an int64 embedding gather and a named transpose,
ONNX MatMulInteger (u8 x i8) with its dequantization, QLinearMatMul, a batch-1 CNN (strided,
depthwise, pointwise and 3x3 convs, a Gemm head) and a batch-2 CNN.

Needs ``tdsl[onnx]``. Usage (minutes per model):

    python benchmarks/tune_models.py [MODEL.onnx ...] [--budget 8] [--cache PATH] [--out DIR] [--keep DIR]

1 thread, IREE's default allocator, constant weights; the ISA is detected and printed with
the figures. ``x DT`` and ``x default`` are medians of the model pass (the tuning's own
figures: the emitted program is IREE's better path where nothing beat it, 1.00x).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
from tdsl.errors import TdslError
from tdsl.measure.machine import ISA_NAMES, machine
from tdsl.tune import LocalExecutor, TuneCache, TuneOptions, tune, write_outputs


def generated(directory: Path, seed: int = 0) -> list[Path]:
    """Writes the generated models into ``directory``; returns their paths."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper
    from onnx import numpy_helper as nh

    rng = np.random.default_rng(seed)

    def weight(shape: tuple[int, ...], name: str, dtype: type = np.float32) -> onnx.TensorProto:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        return nh.from_array((rng.standard_normal(shape) / math.sqrt(fan_in)).astype(dtype), name)

    def value(name: str, dtype: int, shape: list[int]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, dtype, shape)

    def node(op: str, inputs: list[str], outputs: list[str], **attrs: object) -> onnx.NodeProto:
        return helper.make_node(op, inputs, outputs, **attrs)

    def mlp() -> tuple[list, list, list, list]:
        dims, nodes, inits, x = [512, 1024, 1024, 256], [], [], "x"
        for i, (a, b) in enumerate(zip(dims, dims[1:])):
            inits += [
                weight((b, a), f"w{i}"),
                nh.from_array((rng.standard_normal(b) * 0.1).astype(np.float32), f"b{i}"),
            ]
            nodes += [node("Gemm", [x, f"w{i}", f"b{i}"], [f"g{i}"], transB=1), node("Relu", [f"g{i}"], [f"h{i}"])]
            x = f"h{i}"
        return nodes, [value("x", T.FLOAT, [128, dims[0]])], [value(x, T.FLOAT, [128, dims[-1]])], inits

    def f16_mlp() -> tuple[list, list, list, list]:
        inits = [
            weight((256, 512), "w0", np.float16),
            weight((512,), "b0", np.float16),
            weight((512, 256), "w1", np.float16),
        ]
        nodes = [
            node("MatMul", ["x", "w0"], ["h"]),
            node("Add", ["h", "b0"], ["hb"]),
            node("Tanh", ["hb"], ["t"]),
            node("MatMul", ["t", "w1"], ["y"]),
        ]
        return nodes, [value("x", T.FLOAT16, [1, 128, 256])], [value("y", T.FLOAT16, [1, 128, 256])], inits

    def attention() -> tuple[list, list, list, list]:
        inits = [weight((1000, 128), "emb"), weight((128, 128), "wq"), weight((128, 128), "wk")]
        nodes = [
            node("Gather", ["emb", "ids"], ["e"]),
            node("MatMul", ["e", "wq"], ["q"]),
            node("MatMul", ["e", "wk"], ["k"]),
            node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
            node("MatMul", ["q", "kt"], ["s"]),
            node("Softmax", ["s"], ["p"], axis=-1),
            node("MatMul", ["p", "e"], ["y"]),
        ]
        return nodes, [value("ids", T.INT64, [4, 96])], [value("y", T.FLOAT, [4, 96, 128])], inits

    def matmul_integer() -> tuple[list, list, list, list]:
        inits = [
            nh.from_array(rng.integers(-127, 127, (256, 512)).astype(np.int8), "w"),
            nh.from_array(np.array(128, np.uint8), "xz"),
            nh.from_array(np.array(0, np.int8), "wz"),
            nh.from_array(np.array(0.001, np.float32), "s"),
        ]
        nodes = [
            node("MatMulInteger", ["x", "w", "xz", "wz"], ["acc"]),
            node("Cast", ["acc"], ["accf"], to=T.FLOAT),
            node("Mul", ["accf", "s"], ["y0"]),
            node("Relu", ["y0"], ["y"]),
        ]
        return nodes, [value("x", T.UINT8, [64, 256])], [value("y", T.FLOAT, [64, 512])], inits

    def qlinear_matmul() -> tuple[list, list, list, list]:
        scalars = {
            "xs": np.float32(0.02),
            "xz": np.int8(0),
            "ws": np.float32(0.01),
            "wz": np.int8(0),
            "ys": np.float32(0.5),
            "yz": np.int8(0),
        }
        inits = [nh.from_array(rng.integers(-100, 100, (192, 320)).astype(np.int8), "w")] + [
            nh.from_array(np.array(v), k) for k, v in scalars.items()
        ]
        nodes = [
            node("QLinearMatMul", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["q"]),
            node("DequantizeLinear", ["q", "ys", "yz"], ["y"]),
        ]
        return nodes, [value("x", T.INT8, [96, 192])], [value("y", T.FLOAT, [96, 320])], inits

    def cnn() -> tuple[list, list, list, list]:
        inits = [
            weight((32, 3, 3, 3), "c0"),
            nh.from_array(np.zeros(32, np.float32), "b0"),
            weight((32, 1, 3, 3), "dw"),
            weight((64, 32, 1, 1), "pw"),
            weight((64, 64, 3, 3), "c3"),
            weight((10, 64), "fc"),
            nh.from_array(np.zeros(10, np.float32), "fcb"),
        ]
        nodes = [
            node("Conv", ["x", "c0", "b0"], ["a0"], strides=[2, 2], pads=[1, 1, 1, 1]),
            node("Relu", ["a0"], ["a1"]),
            node("Conv", ["a1", "dw"], ["a2"], group=32, pads=[1, 1, 1, 1]),
            node("Relu", ["a2"], ["a3"]),
            node("Conv", ["a3", "pw"], ["a4"]),
            node("Relu", ["a4"], ["a5"]),
            node("Conv", ["a5", "c3"], ["a6"], pads=[1, 1, 1, 1]),
            node("Relu", ["a6"], ["a7"]),
            node("GlobalAveragePool", ["a7"], ["p"]),
            node("Flatten", ["p"], ["f"]),
            node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
        ]
        return nodes, [value("x", T.FLOAT, [1, 3, 64, 64])], [value("y", T.FLOAT, [1, 10])], inits

    def cnn_batch2() -> tuple[list, list, list, list]:
        inits = [
            weight((32, 16, 3, 3), "c0"),
            weight((32, 32, 3, 3), "c1"),
            nh.from_array(np.zeros(32, np.float32), "b1"),
        ]
        nodes = [
            node("Conv", ["x", "c0"], ["a0"], pads=[1, 1, 1, 1]),
            node("Relu", ["a0"], ["a1"]),
            node("Conv", ["a1", "c1", "b1"], ["a2"], pads=[1, 1, 1, 1], strides=[2, 2]),
            node("Sigmoid", ["a2"], ["y"]),
        ]
        return nodes, [value("x", T.FLOAT, [2, 16, 32, 32])], [value("y", T.FLOAT, [2, 32, 16, 16])], inits

    makers: dict[str, Callable[[], tuple[list, list, list, list]]] = {
        "mlp": mlp,
        "f16_mlp": f16_mlp,
        "attention": attention,
        "matmul_integer": matmul_integer,
        "qlinear_matmul": qlinear_matmul,
        "cnn": cnn,
        "cnn_batch2": cnn_batch2,
    }
    paths = []
    for name, make in makers.items():
        nodes, inputs, outputs, inits = make()
        model = helper.make_model(
            helper.make_graph(nodes, name, inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 17)]
        )
        onnx.checker.check_model(model)
        path = directory / f"{name}.onnx"
        onnx.save(model, path)
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", type=Path, help=".onnx models (default: the generated ones)")
    parser.add_argument("--budget", type=int, default=TuneOptions().budget)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated models' weights")
    parser.add_argument("--cache", type=Path, default=None, help="tuning cache (default: the user cache dir)")
    parser.add_argument(
        "--out", type=Path, default=None, help="write each model's tuned.py / report.json under DIR/<model>"
    )
    parser.add_argument("--keep", type=Path, default=None, help="write the generated models into DIR (kept)")
    args = parser.parse_args()
    missing = [str(path) for path in args.models if not path.is_file()]
    if missing:
        parser.error(f"models: expected .onnx files, received {', '.join(missing)} (no such file)")
    m = machine()
    print(
        f"machine: {m['cpu']}, ISA {ISA_NAMES.get(m['isa'], m['isa'])}, {m['cores']} cores; 1 thread; budget {args.budget}; constant weights"
    )
    options = TuneOptions(budget=args.budget)
    ratios: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="tdsl-tune-models-") as tmp,
        TuneCache(args.cache) as cache,
        LocalExecutor() as executor,
    ):
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        models = args.models or generated(where, args.seed)
        print(
            f"{'model':<16} {'IREE default':>13} {'data tiling':>12} {'emitted':>10} {'x DT':>6} {'x default':>9} {'numerics':>9} {'s':>5}  emitted build"
        )
        for path in models:
            started = time.monotonic()
            try:
                result = tune(path, options=options, executor=executor, cache=cache)
            except TdslError as err:
                print(f"tune_models.py: error: {err}", file=sys.stderr)
                return 2
            if args.out:
                write_outputs(result, args.out / path.stem)
            by = {v.label: v for v in result.final}
            default, tiling, chosen = by.get("iree-default"), by.get("iree-data-tiling"), by[result.chosen]

            def ms(v: object) -> str:
                median = getattr(v, "median", None)
                return f"{median * 1e3:.3f}" if median else "-"

            def over(base: object, chosen: object = chosen) -> str:
                b, c = getattr(base, "median", None), getattr(chosen, "median", None)
                return f"{b / c:.2f}x" if b and c else "-"

            best = min((v.median for v in (default, tiling) if v is not None and v.median), default=None)
            if best and chosen.median:
                ratios.append(best / chosen.median)
            verdict = "ok" if result.numerics.get("ok") else ("-" if not result.numerics.get("checked") else "DIFFER")
            print(
                f"{path.stem:<16} {ms(default):>13} {ms(tiling):>12} {ms(chosen):>10} {over(tiling):>6} {over(default):>9} "
                f"{verdict:>9} {time.monotonic() - started:>5.0f}  {result.chosen}"
            )
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(
            f"geomean emitted / best of IREE default and data tiling (medians): {geomean:.2f}x; lowest {min(ratios):.2f}x; models {len(ratios)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
