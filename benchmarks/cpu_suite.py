"""The issue-4 CPU suite: tdsl.strategies.cpu.auto() against IREE default, IREE with data
tiling and numpy, side by side (interleaved) per shape; 1 thread by default.

Shapes: square f32 matmuls 256..2048, 1000^3, 384x128x384, 3136x128x64, 3136x64x64 and
3136x128x128 (1x1 convs of a 56x56 image as matmuls), the 1x4096x4096
matrix-vector product, a 3x3 conv 1x56x56x64 -> 64 (NHWC, input pre-padded), a 1024^3
matmul followed by a transposed add, and one followed by bias + ReLU. ``--weights
runtime`` (default): every operand is a function argument, packed on every call;
``--weights constant``: the second matmul operand (the weights) is a ``util.global``
constant, so IREE may pack it at compile time (no numpy column then). The f32 peak at
each thread count comes first (tdsl.measure.roofline.machine_roofline: an FMA loop per
thread, built with ``cc -O2 -march=native``, cached per machine); the table's last column
is tdsl's GFLOP/s as a share of it. Usage:

    python benchmarks/cpu_suite.py [--threads 1,2] [--repetitions 3] [--weights runtime|constant] [--only mm1024]
                                   [--strategies FILE[:NAME]]

``--strategies`` benchmarks another StrategySet file instead of ``auto(weights=...)`` for this machine.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from tdsl import load
from tdsl.measure.bench import DATA_TILING, DEFAULT, NUMPY, STRATEGY, bench
from tdsl.measure.roofline import machine_roofline
from tdsl.strategies.cpu import auto, detect_isa

HERE = Path(__file__).resolve().parent

MATMULS = {
    "mm256": (256, 256, 256),
    "mm512": (512, 512, 512),
    "mm1024": (1024, 1024, 1024),
    "mm2048": (2048, 2048, 2048),
    "mm1000": (1000, 1000, 1000),
    "mm384x128x384": (384, 128, 384),
    "mm3136x128x64": (3136, 128, 64),
    "mm3136x64x64": (3136, 64, 64),
    "mm3136x128x128": (3136, 128, 128),
    "mv1x4096x4096": (1, 4096, 4096),
}
FLOPS = {name: 2 * m * n * k for name, (m, n, k) in MATMULS.items()}
FLOPS["conv3x3"] = 2 * 56 * 56 * 64 * 3 * 3 * 64
FLOPS["mm1024_tadd"] = 2 * 1024**3
FLOPS["mm1024_bias_relu"] = 2 * 1024**3
BYTES = {name: 4 * (m * k + k * n + m * n) for name, (m, n, k) in MATMULS.items()}
"""The least memory traffic of one call: every operand read once and the result written once."""
BYTES["conv3x3"] = 4 * (58 * 58 * 64 + 3 * 3 * 64 * 64 + 56 * 56 * 64)
BYTES["mm1024_tadd"] = 4 * 4 * 1024**2
BYTES["mm1024_bias_relu"] = 4 * (3 * 1024**2 + 1024)


def matmul_payload(name: str, m: int, n: int, k: int, constant_weights: bool = False) -> str:
    """``name(a, b) = a @ b`` (or ``name(a) = a @ @name_w`` with constant weights)."""
    if constant_weights:
        head = (
            f"util.global private @{name}_w = #util.byte_pattern<1> : tensor<{k}x{n}xf32>\n"
            f"func.func @{name}(%a: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{\n"
            f"  %b = util.global.load @{name}_w : tensor<{k}x{n}xf32>\n"
        )
    else:
        head = f"func.func @{name}(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n"
    return (
        head
        + f"""  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""
    )


def conv_payload(constant_weights: bool = False) -> str:
    w = "tensor<3x3x64x64xf32>"
    if constant_weights:
        head = (
            f"util.global private @conv3x3_w = #util.byte_pattern<1> : {w}\n"
            "func.func @conv3x3(%x: tensor<1x58x58x64xf32>) -> tensor<1x56x56x64xf32> {\n"
            f"  %w = util.global.load @conv3x3_w : {w}\n"
        )
    else:
        head = f"func.func @conv3x3(%x: tensor<1x58x58x64xf32>, %w: {w}) -> tensor<1x56x56x64xf32> {{\n"
    return (
        head
        + f"""  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}} ins(%x, %w : tensor<1x58x58x64xf32>, {w}) outs(%f : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %r : tensor<1x56x56x64xf32>
}}
"""
    )


def matmul_then(name: str, constant_weights: bool, operand: str, operand_map: str, result_map: str, body: str) -> str:
    """A 1024^3 matmul whose result ``%r`` feeds one elementwise generic with a second
    input ``%c`` (type ``operand``), read through ``result_map`` and ``operand_map``."""
    t = "tensor<1024x1024xf32>"
    mm = matmul_payload(name, 1024, 1024, 1024, constant_weights)
    args = "%a: tensor<1024x1024xf32>" + ("" if constant_weights else ", %b: tensor<1024x1024xf32>")
    mm = mm.replace(f"({args})", f"({args}, %c: {operand})")
    return mm.replace(
        f"  return %r : {t}\n",
        f"""  %t = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> {result_map}>, affine_map<(d0, d1) -> {operand_map}>,
                                        affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}}
      ins(%r, %c : {t}, {operand}) outs(%e : {t}) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
{body}
  }} -> {t}
  return %t : {t}
""",
    )


def transposed_add_payload(constant_weights: bool = False) -> str:
    """1024^3 matmul, then ``out[i, j] = mm[j, i] + c[i, j]``."""
    body = "    %s = arith.addf %x, %y : f32\n    linalg.yield %s : f32"
    return matmul_then("mm1024_tadd", constant_weights, "tensor<1024x1024xf32>", "(d0, d1)", "(d1, d0)", body)


def bias_relu_payload(constant_weights: bool = False) -> str:
    """1024^3 matmul, then ``out = max(mm + bias[j], 0)``."""
    body = "    %s = arith.addf %x, %y : f32\n    %m = arith.maximumf %s, %zero : f32\n    linalg.yield %m : f32"
    return matmul_then("mm1024_bias_relu", constant_weights, "tensor<1024xf32>", "(d1)", "(d0, d1)", body)


def payloads(constant_weights: bool) -> dict[str, str]:
    out = {name: matmul_payload(name, *mnk, constant_weights=constant_weights) for name, mnk in MATMULS.items()}
    out["conv3x3"] = conv_payload(constant_weights)
    out["mm1024_tadd"] = transposed_add_payload(constant_weights)
    out["mm1024_bias_relu"] = bias_relu_payload(constant_weights)
    return out


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.1)
    parser.add_argument(
        "--allocator", choices=("default", "caching"), default="default", help="IREE runtime device allocator"
    )
    parser.add_argument("--weights", choices=("runtime", "constant"), default="runtime")
    parser.add_argument("--only", default="", help="substring of the shape names to run")
    parser.add_argument("--strategies", default=None, help="a strategy file (default: auto() for this machine)")
    args = parser.parse_args()
    threads = tuple(int(t) for t in args.threads.split(","))
    peaks = {t: machine_roofline(t) for t in threads}
    for roofline in peaks.values():
        print(roofline.footer(), roofline.methods())
    print(f"weights: {args.weights}")
    strategies = load(args.strategies) if args.strategies else auto(weights=args.weights)
    print(f"strategies: {strategies.name}; ISA: {detect_isa()}")
    vs_best: dict[int, list[float]] = {t: [] for t in threads}
    vs_numpy: dict[int, list[float]] = {t: [] for t in threads}
    print(
        f"{'shape':<16} {'thr':>3} {'tdsl ms':>9} {'default':>9} {'DT':>9} {'numpy':>9} {'x best IREE':>11} {'x numpy':>8} {'GFLOP/s':>8} {'% peak':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in payloads(args.weights == "constant").items():
            if args.only not in name:
                continue
            payload = Path(tmp) / f"{name}.mlir"
            payload.write_text(text)
            report = bench(
                payload,
                strategies,
                threads=threads,
                repetitions=args.repetitions,
                min_time_s=args.min_time,
                allocator=args.allocator,
            )
            for t in threads:
                rows = {v: report.row(name, t, v) for v in (STRATEGY, DEFAULT, DATA_TILING, NUMPY)}
                med = {v: r.median * 1e3 for v, r in rows.items() if r is not None}
                ratio_best = min(
                    report.speedup(name, t, DEFAULT) or math.nan, report.speedup(name, t, DATA_TILING) or math.nan
                )
                ratio_np = report.speedup(name, t, NUMPY) or math.nan
                vs_best[t].append(ratio_best)
                if NUMPY in med:
                    vs_numpy[t].append(ratio_np)
                gflops = FLOPS[name] / (med[STRATEGY] * 1e-3) / 1e9
                share = f"{100 * gflops / peaks[t].peak_gflops:6.0f}%"
                print(
                    f"{name:<16} {t:>3} {med[STRATEGY]:9.3f} {med[DEFAULT]:9.3f} {med[DATA_TILING]:9.3f} "
                    f"{med.get(NUMPY, float('nan')):9.3f} {ratio_best:11.2f} {ratio_np:8.2f} {gflops:8.1f} {share}",
                    flush=True,
                )
    for t in threads:
        if not vs_best[t]:
            continue
        # The targets are single-threaded; 2-thread figures are noisy here.
        line = f"{t}-thread geomean: {geomean(vs_best[t]):.2f}x the better of IREE default / data tiling"
        line += (
            f" (target 1.15x); lowest {min(vs_best[t]):.2f}x (target >= 0.95x)"
            if t == 1
            else f"; lowest {min(vs_best[t]):.2f}x"
        )
        if vs_numpy[t]:
            line += f"; {geomean(vs_numpy[t]):.2f}x numpy over {len(vs_numpy[t])} shapes" + (
                " (target 0.9x)" if t == 1 else ""
            )
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
