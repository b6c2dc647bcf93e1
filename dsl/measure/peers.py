"""The runtimes users deploy an ONNX model with instead of IREE -- onnxruntime and, where
the ``tdsl[peers]`` extra is installed, OpenVINO -- timed side by side in one fresh Python
process at a given thread count.

A *peer round* loads every peer's session (onnxruntime's CPU provider with
``intra_op_num_threads``; OpenVINO's CPU plugin with ``INFERENCE_NUM_THREADS``, the latency
hint, one stream and ``INFERENCE_PRECISION_HINT=f32``, so that it stays an f32 comparison on
CPUs with AMX or BF16), warms each up, then calls them in turn in short bursts, a fresh
shuffled order per cycle, until each has had ``min_time_s`` of calls: the peers see the same
spells of a drifting core, as IREE's builds do in :func:`tdsl.measure.timing.time_round`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Sequence, Union

from ..errors import BenchFailed
from .timing import run_tool

ONNXRUNTIME = "onnxruntime"
OPENVINO = "openvino"
PEERS = (ONNXRUNTIME, OPENVINO)
"""Every peer, in the order reports list them."""

_MODULES = {ONNXRUNTIME: "onnxruntime", OPENVINO: "openvino"}
_INSTALL = {ONNXRUNTIME: "pip install 'tdsl[onnx]'", OPENVINO: "pip install 'tdsl[peers]'"}

_PEER_ROUND = r"""
import json, random, sys, time
import numpy as np
args = json.loads(sys.argv[1])
threads, names = args["threads"], args["peers"]
calls = {}
if "onnxruntime" in names:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(args["model"], options, providers=["CPUExecutionProvider"])
    order = [i.name for i in session.get_inputs()]
    feed = {name: np.load(p) for name, p in zip(order, args["inputs"])}
    calls["onnxruntime"] = lambda: session.run(None, feed)
if "openvino" in names:
    import openvino as ov
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
              "INFERENCE_PRECISION_HINT": "f32"}
    compiled = ov.Core().compile_model(args["model"], "CPU", config)
    request = compiled.create_infer_request()
    order = [port.any_name for port in compiled.inputs]
    import onnx
    graph = onnx.load(args["model"], load_external_data=False).graph
    constants = {t.name for t in graph.initializer}
    graph_order = [i.name for i in graph.input if i.name not in constants]
    by_name = {name: np.load(p) for name, p in zip(graph_order, args["inputs"])}
    ov_feed = {name: by_name[name] for name in order}
    calls["openvino"] = lambda: request.infer(ov_feed)
for call in calls.values():
    end = time.perf_counter() + args["warmup"]
    call()
    while time.perf_counter() < end:
        call()
rng = random.Random(args["seed"])
spent = {name: 0.0 for name in calls}
count = {name: 0 for name in calls}
burst = args["min_time"] / 4
while any(spent[n] < args["min_time"] for n in calls):
    order = [n for n in calls if spent[n] < args["min_time"]]
    rng.shuffle(order)
    for name in order:
        call, start = calls[name], time.perf_counter()
        while True:
            call(); count[name] += 1
            elapsed = time.perf_counter() - start
            if elapsed >= burst:
                break
        spent[name] += elapsed
print(json.dumps({name: spent[name] / count[name] for name in calls}))
"""


def installed_peers() -> tuple[str, ...]:
    """The peers whose Python package is importable here, in :data:`PEERS` order."""
    return tuple(p for p in PEERS if importlib.util.find_spec(_MODULES[p]) is not None)


def install_command(peer: str) -> str:
    """The command that installs ``peer``'s package with tdsl's extra."""
    return _INSTALL[peer]


def missing_peers_note(found: Sequence[str]) -> str | None:
    """One note naming the peers that are not installed and how to install them; None when
    all are."""
    missing = [p for p in PEERS if p not in found]
    if not missing:
        return None
    return "; ".join(f"{p} is not installed, so it has no row ({_INSTALL[p]})" for p in missing)


PeerChoice = Union[bool, Sequence[str]]
"""Which peers to time: every installed one (True), none (False) or exactly those named."""


def choose_peers(wanted: PeerChoice, onnx: bool, functions: int, notes: list[str]) -> tuple[str, ...]:
    """The peers to time, in :data:`PEERS` order: for an ``.onnx`` model (``onnx``) of one
    function, every installed one (``True``; a note names the missing), none (``False``) or
    exactly those named, each of which must be installed (else one
    :class:`~tdsl.errors.BenchFailed` line, before any work). Notes say why there are none
    and how OpenVINO runs."""
    if wanted is False:
        return ()
    found = installed_peers()
    if wanted is not True:
        named = tuple(dict.fromkeys(wanted))
        unknown = [p for p in named if p not in PEERS]
        if unknown:
            raise BenchFailed(f"peers: expected some of {list(PEERS)}, received {unknown[0]!r}")
        absent = [p for p in named if p not in found]
        if absent:
            raise BenchFailed(
                f"peers: expected installed runtimes, received {absent[0]!r}, which is not installed "
                f"({install_command(absent[0])})"
            )
        found = tuple(p for p in PEERS if p in named)
    if not onnx:
        notes.append("no peer runtimes: they run .onnx models, and the payload is MLIR")
        return ()
    if functions != 1:
        notes.append(f"no peer runtimes: the model has {functions} public functions, the peers run one graph")
        return ()
    if wanted is True and (missing := missing_peers_note(found)):
        notes.append(missing)
    if OPENVINO in found:
        notes.append("OpenVINO runs with INFERENCE_PRECISION_HINT=f32 (an f32 comparison on CPUs with AMX or BF16)")
    return found


def peer_round(
    peers: Sequence[str], model: Path, inputs: Sequence[Path], threads: int, min_time_s: float, seed: int = 0
) -> dict[str, float]:
    """{peer: seconds per call} of the ONNX ``model`` on ``inputs`` (``.npy`` files in the
    graph's input order) under each of ``peers`` at ``threads`` threads, timed side by side
    in one fresh process (see the module docstring). A peer that cannot load or run the
    model is one :class:`~tdsl.errors.BenchFailed` line."""
    unknown = [p for p in peers if p not in PEERS]
    if unknown or not peers:
        raise BenchFailed(f"peers: expected some of {list(PEERS)}, received {list(peers)}")
    args = {
        "model": str(model),
        "inputs": [str(p) for p in inputs],
        "threads": threads,
        "peers": list(peers),
        "min_time": min_time_s,
        "warmup": 0.05,
        "seed": seed,
    }
    stdout = run_tool([sys.executable, "-c", _PEER_ROUND, json.dumps(args)], f"the {'/'.join(peers)} timer")
    seconds = json.loads(stdout)
    return {p: float(seconds[p]) for p in peers}
