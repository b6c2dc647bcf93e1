"""The example models (or any .onnx files): ``tdsl.strategies.cpu.auto()`` against IREE
default, IREE data tiling (the best IREE path) and onnxruntime, side by side, 1 thread,
with constant weights (as exported) and with runtime weights (every float initializer of
rank >= 2 that a MatMul, Gemm or Conv reads made a graph input, so it is packed on every call).

Needs ``tdsl[onnx]``. Usage (minutes per model):

    python benchmarks/models.py [MODEL.onnx ...] [--weights constant,runtime] [--repetitions 5]

Prints one row per model and weight mode with medians (ms), ``x best IREE``: the lower of
tdsl's speed-ups over IREE default and over data tiling (each the median over rounds of
that round's ratio, the IREE builds timed side by side in one process; above 1: tdsl is
faster), ``x ORT`` the same over onnxruntime, and the machine's ISA.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from tdsl.measure.bench import DATA_TILING, DEFAULT, ONNXRUNTIME, STRATEGY, bench
from tdsl.programs.weights import refill_weights
from tdsl.strategies.cpu import auto, detect_isa

HERE = Path(__file__).resolve().parent
WEIGHT_OPS = ("MatMul", "Gemm", "Conv")
MODELS = sorted((HERE.parent / "examples" / "models").glob("*/model.onnx"))


def runtime_weights(model_path: Path, out: Path, seed: int = 0) -> Path:
    """``model_path`` with its stripped weights drawn from ``seed`` and every float
    initializer of rank >= 2 that a MatMul, Gemm or Conv reads moved to the graph inputs
    (shape constants and embedding tables stay)."""
    import onnx
    from onnx import helper

    model = onnx.load(str(model_path))
    refill_weights(model, seed)
    read = {name for node in model.graph.node if node.op_type in WEIGHT_OPS for name in node.input}
    kept, moved = [], []
    for tensor in model.graph.initializer:
        is_float = tensor.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
        (moved if is_float and len(tensor.dims) >= 2 and tensor.name in read else kept).append(tensor)
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    model.graph.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in moved)
    onnx.save(model, str(out))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", type=Path, default=MODELS)
    parser.add_argument("--weights", default="constant,runtime")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument(
        "--allocator", choices=("default", "caching"), default="default", help="IREE runtime device allocator"
    )
    args = parser.parse_args()
    isa = detect_isa()
    print(f"ISA: {isa}; 1 thread; medians of {args.repetitions} interleaved rounds, ratios paired by round")
    print(
        f"{'model':<12} {'weights':<8} {'tdsl ms':>8} {'default':>8} {'DT':>8} {'ORT':>8} {'x best IREE':>11} {'x ORT':>6}"
    )
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            name = model.parent.name if model.name == "model.onnx" else model.stem
            for weights in args.weights.split(","):
                path = model if weights == "constant" else runtime_weights(model, Path(tmp) / f"{name}_runtime.onnx")
                strategies = auto(weights="runtime" if weights == "runtime" else "constant")
                report = bench(
                    path,
                    strategies,
                    repetitions=args.repetitions,
                    min_time_s=args.min_time,
                    numpy_baseline=False,
                    allocator=args.allocator,
                )
                function = report.rows[0].function
                med = {}
                for variant in (STRATEGY, DEFAULT, DATA_TILING, ONNXRUNTIME):
                    row = report.row(function, 1, variant)
                    if row is not None:
                        med[variant] = row.median * 1e3
                best = min(
                    report.speedup(function, 1, DEFAULT) or math.nan,
                    report.speedup(function, 1, DATA_TILING) or math.nan,
                )
                ort = report.speedup(function, 1, ONNXRUNTIME) or math.nan
                ratios.append(best)
                print(
                    f"{name:<12} {weights:<8} {med[STRATEGY]:8.3f} {med[DEFAULT]:8.3f} {med[DATA_TILING]:8.3f} "
                    f"{med.get(ONNXRUNTIME, float('nan')):8.3f} {best:11.2f} {ort:6.2f}",
                    flush=True,
                )
    print(f"lowest {min(ratios):.2f}x the better of IREE default / data tiling (bar: >= 1.0x, within noise)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
