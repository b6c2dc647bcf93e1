"""Benchmarking a strategy side by side with IREE's paths and numpy, in one run.

``bench(payload, strategies)`` compiles the payload for llvm-cpu three ways -- with the
strategies, with IREE's default pipeline and with ``--iree-opt-data-tiling`` (IREE 3.13's
best CPU path; off by default; one of IREE's two that does not compile gets a note instead
of a row) -- and, where a function is a plain matmul / batch matmul
/ convolution, also times numpy (OpenBLAS, in a fresh process with
``OPENBLAS_CORETYPE`` unset: this environment may export ``Haswell``, which caps
OpenBLAS at AVX2). In every repetition IREE's three builds are timed side by side in one
process (:func:`tdsl.measure.timing.time_round`: each loaded, then called in turn in short
bursts, a fresh shuffled order per cycle), so they see the same spells of a drifting core;
numpy runs in a process of its own. Repetitions are interleaved in a shuffled order. The
report gives medians, GFLOP/s (the flops of every contraction and convolution of a
function, counted from its loops with the bindings) and ratios against the strategy: the
median over repetitions of each repetition's ratio. A numpy row on other than float32/float64 data (numpy has no BLAS path for
f16 or integers: an f16 matmul runs at about 0.6 GFLOP/s) or on a strided or dilated
convolution (the timer's im2col is stride-1) is labelled "not comparable" and left out of
the ratios. Weights are runtime inputs when every operand is a function argument
(packed on every call), compile-time constants when the payload loads them from a
``util.global`` (IREE can then pack them once, at compile time); the report says which.
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .. import bindings as mlir
from ..compiler.compile import compile_default, compile_with_options
from ..compiler.iree_compile import CompileFailed
from ..compiler.ops import graph_linalg_ops
from ..compiler.options import DEFAULT_MEMORY_GB, DEFAULT_OPTIONS, DEFAULT_TIMEOUT_S, CompileOptions, flag_tuple
from ..compiler.progress import NO_PROGRESS, Progress
from ..errors import BenchFailed
from ..programs.inputs import make_inputs
from ..programs.load import program_of
from ..programs.parameters import check_runnable
from ..programs.program import ParameterArchive, Program
from ..programs.signatures import Signature, signatures
from ..sets.loader import as_strategy_set
from ..sets.strategy_set import StrategySet
from ..targets import CpuTarget, Target
from ..targets.knobs import knobs_line
from .baselines import numpy_sample
from .bench_report import (
    BUILT_IN_VARIANTS,
    DATA_TILING,
    DEFAULT,
    NUMPY,
    ONNXRUNTIME,
    OPENVINO,
    STRATEGY,
    BenchJson,
    BenchReport,
    BenchRowJson,
    Row,
    variant_order,
)
from .execute import numpy_reference
from .machine import machine
from .peers import choose_peers, peer_round
from .timing import ALLOCATORS, SAMPLE_TIMEOUT_S, iree_sample, time_round

__all__ = [
    "DATA_TILING",
    "DEFAULT",
    "NUMPY",
    "ONNXRUNTIME",
    "OPENVINO",
    "STRATEGY",
    "BenchJson",
    "BenchReport",
    "BenchRowJson",
    "Row",
    "bench",
    "bench_with_options",
    "function_flops",
]

IREE_ROUND = "iree builds"
PEER_ROUND = "peer runtimes"


COMPARABLE_DTYPES = ("float32", "float64")
"""numpy runs BLAS (OpenBLAS) only on these; on others it falls back to slow loops."""


def function_flops(ops: Sequence[mlir.LinalgOp]) -> dict[str, float]:
    """{function: flops of one call}: two per point of the loop nest of every contraction
    and convolution (functions without any are left out). Pooling ops, which linalg counts
    as convolutions, are left out: they add, they do not multiply-add."""
    flops: dict[str, float] = {}
    for op in ops:
        if op.kind not in ("contraction", "convolution") or not op.loop_sizes or op.function is None:
            continue
        if op.name.startswith("linalg.pooling_"):
            continue
        if any(size < 0 for size in op.loop_sizes):
            continue
        total = 2.0
        for size in op.loop_sizes:
            total *= size
        flops[op.function] = flops.get(op.function, 0.0) + total
    return flops


def _numpy_kind(
    text: str, function: str, inputs: Sequence[np.ndarray], ops: Sequence[mlir.LinalgOp]
) -> tuple[str, str, str] | None:
    """(kind, layout, why not comparable: empty if comparable) when numpy can compute
    ``function``; else None."""
    if numpy_reference(text, function, inputs) is None:
        return None
    mine = [op for op in ops if op.function == function]
    names = {op.name for op in mine}
    odd = [str(a.dtype) for a in inputs if str(a.dtype) not in COMPARABLE_DTYPES]
    why = (
        f"numpy has no BLAS path for {'/'.join(sorted(set(odd)))} data (it runs plain loops); "
        "only float32/float64 numpy rows are baselines"
        if odd
        else ""
    )
    if "linalg.conv_2d_nhwc_hwcf" in names or "linalg.conv_2d_nchw_fchw" in names:
        conv = next((op for op in mine if op.kind == "convolution"), None)
        if conv is not None and (any(v != 1 for v in conv.strides) or any(v != 1 for v in conv.dilations)) and not why:
            why = "the numpy timer's im2col assumes stride 1 and dilation 1 (it does other work)"
        return "conv", "nchw" if "linalg.conv_2d_nchw_fchw" in names else "nhwc", why
    return "matmul", "", why


def _iree_round(
    modules: Sequence[tuple[str, Path]],
    function: str,
    inputs: Sequence[Path],
    threads: int,
    min_time_s: float,
    allocator: str,
    parameters: Sequence[ParameterArchive],
    seed: int,
) -> dict[str, float]:
    """Seconds per call of ``function`` in each named module: side by side in one process
    (:func:`time_round`) with IREE's default allocator, else (``caching``, or a runner that
    died) one ``iree-benchmark-module`` process each, in the given order."""
    if allocator == "default":
        timed = time_round(
            [m for _, m in modules],
            function,
            inputs,
            min_time_s=min_time_s,
            timeouts_s=[SAMPLE_TIMEOUT_S] * len(modules),
            threads=threads,
            parameters=parameters,
            seed=seed,
        )
        if timed is not None:
            seconds: dict[str, float] = {}
            for (name, _), slot in zip(modules, timed):
                if slot.seconds is None:
                    raise BenchFailed(f"timing the {name} build of {function} failed: {slot.error}")
                seconds[name] = slot.seconds
            return seconds
    return {
        name: iree_sample(m, function, inputs, threads, min_time_s, allocator, [a.spec for a in parameters])
        for name, m in modules
    }


def _machine() -> dict[str, object]:
    return {
        **machine(),
        "OPENBLAS_CORETYPE (environment)": os.environ.get("OPENBLAS_CORETYPE"),
        "numpy OPENBLAS_CORETYPE": "unset (autodetected)",
    }


def bench(
    payload: Path | str | Program,
    strategies: StrategySet | str | Path,
    target: Target | str = CpuTarget.default_name,
    *,
    threads: Sequence[int] = (1,),
    repetitions: int = 5,
    min_time_s: float = 0.1,
    seed: int = 0,
    input_ranges: Mapping[str, tuple[float, float]] = {},
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    numpy_baseline: bool = True,
    peers: bool | Sequence[str] = True,
    also: Mapping[str, StrategySet | str | Path] = {},
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_gb: float = DEFAULT_MEMORY_GB,
    extra_flags: Sequence[str] = (),
    serial_loading: bool = True,
    allocator: str = "default",
    progress: Progress = NO_PROGRESS,
) -> BenchReport:
    """Times every public function of ``payload`` under each variant; see the module docstring.

    ``extra_flags`` go to every build (strategy, IREE default, IREE data tiling);
    ``serial_loading`` as in :func:`tdsl.compile`; ``allocator`` (one of :data:`ALLOCATORS`)
    is the IREE runtime's device allocator for the IREE builds; ``progress`` receives a ``compile`` step
    per ``iree-compile`` run and a ``sample`` step per timed sample. ``payload`` is an
    ``.onnx`` model (then, with ``peers``, onnxruntime and OpenVINO where installed are
    timed too, at the same thread counts), a torch/ONNX-dialect or linalg ``.mlir`` file,
    or a loaded program; seeded inputs as in :func:`tdsl.run`. ``also`` names more strategy
    sets ({variant name: set}), each built and timed side by side with IREE's builds."""
    options = CompileOptions(
        timeout_s=timeout_s, memory_gb=memory_gb, extra_flags=flag_tuple(extra_flags), serial_loading=serial_loading
    )
    return bench_with_options(
        payload,
        strategies,
        target,
        options=options,
        threads=threads,
        repetitions=repetitions,
        min_time_s=min_time_s,
        seed=seed,
        input_ranges=input_ranges,
        dims=dims,
        weights_seed=weights_seed,
        numpy_baseline=numpy_baseline,
        peers=peers,
        also=also,
        allocator=allocator,
        progress=progress,
    )


def bench_with_options(
    payload: Path | str | Program,
    strategies: StrategySet | str | Path,
    target: Target | str = CpuTarget.default_name,
    *,
    options: CompileOptions = DEFAULT_OPTIONS,
    threads: Sequence[int] = (1,),
    repetitions: int = 5,
    min_time_s: float = 0.1,
    seed: int = 0,
    input_ranges: Mapping[str, tuple[float, float]] = {},
    dims: Mapping[str, int] = {},
    weights_seed: int = 0,
    numpy_baseline: bool = True,
    peers: bool | Sequence[str] = True,
    also: Mapping[str, StrategySet | str | Path] = {},
    allocator: str = "default",
    progress: Progress = NO_PROGRESS,
) -> BenchReport:
    """:func:`bench` with its ``iree-compile`` options as one value."""
    strategy_set, target_model = as_strategy_set(strategies).for_target(target)
    _check_settings(target_model, repetitions, threads, allocator)
    compared = _compared_sets(also, target)
    program = program_of(payload, dims, weights_seed)
    check_runnable(program)
    functions = signatures(program)
    report = BenchReport(str(program.source), [], machine=_machine())
    report.notes.extend(program.notes)
    report.notes.extend(_setup_notes(program.text(), allocator))
    peer_names = choose_peers(peers, program.onnx_path is not None, len(functions), report.notes)
    with tempfile.TemporaryDirectory(prefix="tdsl-bench-") as tmp:
        work = Path(tmp)
        modules, flags = _compile_variants(
            program, {STRATEGY: strategy_set, **compared}, target_model, work, options, report.notes, progress
        )
        plan = _plan(
            program, functions, flags, work, threads, seed, input_ranges, numpy_baseline, peer_names, options, progress
        )
        samples = _sample(plan, modules, repetitions, min_time_s, allocator, program.parameters, seed, progress)
    _add_rows(report, plan, samples, numpy_baseline)
    return report


def _check_settings(target: Target, repetitions: int, threads: Sequence[int], allocator: str) -> None:
    """A target that runs here, at least one repetition and thread, a known allocator."""
    if not target.runs_on_host:
        raise BenchFailed(f"tdsl bench measures on this CPU; target {target.name!r} is {target.backend}")
    if repetitions < 1 or any(t < 1 for t in threads):
        raise BenchFailed("repetitions and thread counts must be at least 1")
    if allocator not in ALLOCATORS:
        raise BenchFailed(f"allocator: expected one of {list(ALLOCATORS)}, received {allocator!r}")


def _setup_notes(text: str, allocator: str) -> list[str]:
    """The report's notes on how the weights reach the builds and on the runtime's allocator."""
    if "util.global.load" in text or "onnx.Constant" in text or "dense_resource" in text:
        notes = ["weights are compile-time constants (util.global): packs of them can run at compile time"]
    else:
        notes = ["weights are runtime inputs: every operand is a function argument, packed per call"]
    if allocator == "caching":
        notes.append(
            "IREE builds run with --device_allocator=caching: transient buffers are reused across calls "
            "(each build timed in an iree-benchmark-module process of its own, not side by side)"
        )
    else:
        notes.append(
            "IREE builds run with the runtime's default allocator: transient buffers come from malloc, glibc "
            "pinned to a long-running process's steady state (blocks under 32 MiB reused, larger ones mapped "
            "fresh on every call); --allocator caching has IREE reuse them all"
        )
    return notes


def _compared_sets(also: Mapping[str, StrategySet | str | Path], target: Target | str) -> dict[str, StrategySet]:
    """{variant name: set} of the compared strategy sets, each for ``target``; a name that
    is empty, has spaces or is one of :data:`BUILT_IN_VARIANTS` is one line."""
    compared: dict[str, StrategySet] = {}
    for name, value in also.items():
        if not name or any(c.isspace() for c in name) or name in BUILT_IN_VARIANTS:
            raise BenchFailed(
                f"also: expected variant names without spaces other than {list(BUILT_IN_VARIANTS)}, received {name!r}"
            )
        compared[name] = as_strategy_set(value).for_target(target)[0]
    return compared


def _compile_variants(
    program: Program,
    strategy_sets: Mapping[str, StrategySet],
    target: Target,
    work: Path,
    options: CompileOptions,
    notes: list[str],
    progress: Progress,
) -> tuple[dict[str, Path], list[str]]:
    """The strategy builds ({variant: set}; the first is the strategy) and IREE's two
    (default, data tiling) in ``work``: {variant: module} and IREE's flags. A strategy build
    that fails raises; one of IREE's that does not compile gets a note instead of a module."""
    modules = {name: work / f"variant{i}.vmfb" for i, name in enumerate(strategy_sets)}
    modules.update({DEFAULT: work / "default.vmfb", DATA_TILING: work / "dt.vmfb"})
    progress.expect("compile", len(strategy_sets) + 1 + (program.kind != "linalg"))
    for name, strategy_set in strategy_sets.items():
        built = compile_with_options(
            program.mlir_path, strategy_set, target.name, modules[name], options=options, progress=progress
        )
        label = "strategy build" if name == STRATEGY else f"{name} build"
        if built.knobs:
            notes.append(f"{label}'s program knobs: {knobs_line(built.knobs)}")
        notes.extend(built.notes)
    # IREE's own paths keep IREE's default ukernels (data tiling uses the mmt4d ukernel);
    # only the strategy build carries the target's ukernel override.
    flags = [*target.baseline().compile_flags(), *options.extra_flags]
    for name, label, more in (
        (DEFAULT, "IREE default", []),
        (DATA_TILING, "IREE data tiling", ["--iree-opt-data-tiling"]),
    ):
        with progress.step("compile", label):
            try:
                compile_default(program.mlir_path, [*flags, *more], modules[name], options)
            except CompileFailed as err:
                # IREE's own path failing is a finding, not a bad input: the strategy is
                # still timed against the paths that compiled.
                del modules[name]
                why = "; ".join(line.strip() for line in str(err).splitlines() if line.strip())
                notes.append(f"{label} did not compile, so it has no row: {why}")
    return modules, flags


@dataclass(frozen=True)
class _Timed:
    """One item of a repetition: ``function`` at ``threads`` under IREE's builds (one round,
    side by side), numpy (``numpy``: kind and layout) or the peer runtimes (one round, side
    by side, on ``model``)."""

    function: str
    threads: int
    variant: str
    inputs: tuple[Path, ...]
    numpy: tuple[str, str] = ("", "")
    model: Path | None = None


@dataclass
class _Plan:
    """What each repetition times, and per function its flops (None: no contraction or
    convolution) and, where numpy computes it, why its numpy row is not comparable ("")."""

    items: list[_Timed] = field(default_factory=list)
    flops: dict[str, float | None] = field(default_factory=dict)
    numpy_odd: dict[str, str] = field(default_factory=dict)
    functions: int = 0
    peers: tuple[str, ...] = ()


def _plan(
    program: Program,
    functions: Sequence[Signature],
    flags: list[str],
    work: Path,
    threads: Sequence[int],
    seed: int,
    input_ranges: Mapping[str, tuple[float, float]],
    numpy_baseline: bool,
    peers: tuple[str, ...],
    options: CompileOptions,
    progress: Progress,
) -> _Plan:
    """Seeded inputs saved in ``work`` and one item per (function, threads): IREE's builds
    as one round, ``peers`` as one round, numpy in a process of its own."""
    text = program.text()
    ops = mlir.linalg_ops(text)
    if program.kind == "linalg":
        counted = function_flops(ops)
    else:
        # A torch/ONNX-dialect program has its contractions in linalg form only after
        # IREE's input conversion.
        with progress.step("compile", "linalg form (flops)"):
            counted = function_flops(graph_linalg_ops(program.mlir_path, flags, options))
    plan = _Plan(functions=len(functions), peers=peers)
    for sig in functions:
        arrays = make_inputs(sig, seed, input_ranges)
        paths = []
        for i, array in enumerate(arrays):
            paths.append(work / f"{sig.function}_{i}.npy")
            np.save(paths[-1], array)
        kind = _numpy_kind(text, sig.function, arrays, ops) if numpy_baseline else None
        plan.flops[sig.function] = counted.get(sig.function)
        if kind is not None:
            plan.numpy_odd[sig.function] = kind[2]
        for t in threads:
            plan.items.append(_Timed(sig.function, t, IREE_ROUND, tuple(paths)))
            if kind is not None:
                plan.items.append(_Timed(sig.function, t, NUMPY, tuple(paths), numpy=(kind[0], kind[1])))
            if peers and program.onnx_path is not None:
                plan.items.append(_Timed(sig.function, t, PEER_ROUND, tuple(paths), model=program.onnx_path))
    return plan


def _sample(
    plan: _Plan,
    modules: dict[str, Path],
    repetitions: int,
    min_time_s: float,
    allocator: str,
    parameters: Sequence[ParameterArchive],
    seed: int,
    progress: Progress,
) -> dict[tuple[str, int, str], list[float]]:
    """{(function, threads, variant): seconds per call, one per repetition}: the plan's
    items in a fresh shuffled order each repetition, IREE's builds in a shuffled order."""
    samples: dict[tuple[str, int, str], list[float]] = {}
    members = {IREE_ROUND: list(modules), PEER_ROUND: list(plan.peers)}
    for item in plan.items:
        for v in members.get(item.variant, [item.variant]):
            samples[(item.function, item.threads, v)] = []
    rng = random.Random(seed)
    progress.expect("sample", len(samples) * repetitions)
    for _ in range(repetitions):
        order = list(plan.items)
        rng.shuffle(order)
        for item in order:
            function, t = item.function, item.threads
            if item.variant == NUMPY:
                progress.begin("sample", f"{function} numpy {t}T")
                samples[(function, t, NUMPY)].append(
                    numpy_sample(item.numpy[0], item.numpy[1], item.inputs, t, min_time_s)
                )
                progress.advance("sample")
            elif item.variant == PEER_ROUND:
                assert item.model is not None
                progress.begin("sample", f"{function} {'/'.join(plan.peers)} side by side {t}T")
                timed = peer_round(plan.peers, item.model, item.inputs, t, min_time_s, rng.randrange(1 << 31))
                for name in plan.peers:
                    samples[(function, t, name)].append(timed[name])
                    progress.advance("sample")
            else:
                names = list(modules)
                rng.shuffle(names)
                progress.begin("sample", f"{function} IREE builds side by side {t}T")
                timed = _iree_round(
                    [(n, modules[n]) for n in names],
                    function,
                    item.inputs,
                    t,
                    min_time_s,
                    allocator,
                    parameters,
                    rng.randrange(1 << 31),
                )
                for name in names:
                    samples[(function, t, name)].append(timed[name])
                    progress.advance("sample")
    return samples


def _add_rows(
    report: BenchReport, plan: _Plan, samples: dict[tuple[str, int, str], list[float]], numpy_baseline: bool
) -> None:
    """The report's rows, by function, threads and variant, and the closing notes."""
    for (function, t, variant), values in sorted(
        samples.items(), key=lambda kv: (kv[0][0], kv[0][1], variant_order(kv[0][2]))
    ):
        odd = plan.numpy_odd.get(function, "") if variant == NUMPY else ""
        report.rows.append(Row(function, t, variant, tuple(values), plan.flops.get(function), odd))
    if any(f is None for f in plan.flops.values()):
        report.notes.append("no GFLOP/s for functions without a contraction or convolution")
    if numpy_baseline and len(plan.numpy_odd) < plan.functions:
        report.notes.append("no numpy baseline for functions that are not a plain matmul, batch matmul or convolution")
    if plan.numpy_odd:
        report.notes.append(
            "numpy runs in a fresh process per sample with OPENBLAS_CORETYPE unset (AVX-512 kernels where available)"
        )
