"""A matmul whose weight is a parameter global, and the archive that holds it: the
program shape of a large model deployed with its weights in an ``.irpa`` file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

WEIGHTED = """\
util.global private @w = #stream.parameter.named<"model"::"w"> : tensor<64x32xf32>
func.func @mm(%a: tensor<48x64xf32>) -> tensor<48x32xf32> {
  %b = util.global.load @w : tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<48x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<48x32xf32>) -> tensor<48x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<48x64xf32>, tensor<64x32xf32>) outs(%f : tensor<48x32xf32>) -> tensor<48x32xf32>
  return %r : tensor<48x32xf32>
}
"""


def write_weighted(directory: Path, seed: int = 3) -> tuple[Path, Path, np.ndarray]:
    """Writes ``weighted.mlir`` and ``weights.irpa`` (seeded weights, scope ``model``) to
    ``directory``; returns both paths and the weights."""
    from iree.runtime import save_archive_file

    weights = np.random.default_rng(seed).standard_normal((64, 32)).astype(np.float32)
    archive = directory / "weights.irpa"
    save_archive_file({"w": weights}, archive)
    payload = directory / "weighted.mlir"
    payload.write_text(WEIGHTED)
    return payload, archive, weights
