"""The baseline ``tdsl bench`` times beside IREE on a plain matmul or convolution: numpy
(OpenBLAS), in a fresh Python process after a short warm-up, returning seconds per call.
The runtimes users deploy whole models with are in :mod:`tdsl.measure.peers`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Mapping, Sequence

from .timing import run_tool

_NUMPY_TIMER = r"""
import json, sys, time
import numpy as np
args = json.loads(sys.argv[1])
arrays = [np.load(p) for p in args["inputs"]]
kind = args["kind"]
def call():
    if kind == "matmul":
        return arrays[0] @ arrays[1]
    x, w = arrays  # conv: im2col + GEMM, both timed
    if args["layout"] == "nchw":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    kh, kw, c, f = w.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))
    cols = np.ascontiguousarray(windows.transpose(0, 1, 2, 4, 5, 3)).reshape(-1, kh * kw * c)
    return cols @ w.reshape(kh * kw * c, f)
end = time.perf_counter() + args["warmup"]
while time.perf_counter() < end:
    call()
calls, start = 0, time.perf_counter()
while True:
    call(); calls += 1
    elapsed = time.perf_counter() - start
    if elapsed >= args["min_time"]:
        break
print(json.dumps({"seconds_per_call": elapsed / calls}))
"""


def _timer_sample(what: str, script: str, args: Mapping[str, object], env: dict[str, str] | None = None) -> float:
    """Seconds per call measured by ``script`` in a fresh Python process."""
    stdout = run_tool([sys.executable, "-c", script, json.dumps(args)], f"the {what} timer", env=env)
    return float(json.loads(stdout)["seconds_per_call"])


def numpy_sample(kind: str, layout: str, inputs: Sequence[Path], threads: int, min_time_s: float) -> float:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    args = {"inputs": [str(p) for p in inputs], "kind": kind, "layout": layout, "min_time": min_time_s, "warmup": 0.05}
    return _timer_sample(f"numpy ({kind})", _NUMPY_TIMER, args, env)
