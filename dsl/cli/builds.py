"""The commands that build a payload: ``compile`` (what applied), ``run`` (numbers against
references) and ``bench`` (times against IREE's paths); each its arguments and what it runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..compiler.phases import PHASES
from ..errors import ArgumentError
from .arguments import (
    Commands,
    add_command,
    add_flag_args,
    add_limits,
    add_payload_args,
    compared_set,
    nonnegative_int,
    peer_names,
    positive_float,
    positive_int,
    thread_counts,
)
from .exits import EXIT_OK, EXIT_VERDICT
from .options import compile_options, load_inputs, print_json, program_of_args, progress_bars, verbosity, warn


def add_compile(sub: Commands) -> None:
    """``tdsl compile``: compile a payload and report what applied."""
    p = add_command(
        sub,
        "compile",
        help="compile a payload with the strategies and report what applied",
        description="Render and verify the strategies, run iree-compile with them under a timeout and memory cap, and report which rules applied to which dispatches. Any 'error:' from iree-compile is a failure. Without --strategies, compile with IREE's default pipeline for --target (cpu or gfx942) and report it.",
    )
    add_payload_args(p, cpu_only=False, strategies_required=False)
    p.add_argument("-o", "--output", type=Path, metavar="OUT.vmfb", help="write the compiled module (.vmfb) here")
    p.add_argument("--dump-ir", choices=PHASES, help="also write the IR at this phase next to the output")
    p.add_argument(
        "--strict",
        action="store_true",
        help="a rule of yours that matches nothing is an error (exit 1); ready-library rules (Rule.optional) never are",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="per dispatch: pipeline and lowering config (tile sizes per level); gfx942: also LDS, VGPR/AGPR/SGPR, spills, MFMA count, waves per SIMD",
    )
    p.add_argument(
        "--baseline",
        action="store_true",
        help="also compile with IREE's default pipeline and print its --report next to the strategy's, per dispatch",
    )
    p.add_argument(
        "--keep-dump",
        type=Path,
        metavar="DIR",
        help="keep IREE's executable dump (configured IR, assembly, binaries) and the rendered scripts (DIR/scripts) in DIR (new, empty, or an earlier --keep-dump's) and print its path",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_flag_args(p, writes_flags=False)
    add_limits(p)
    p.set_defaults(run=_cmd_compile)


def add_run(sub: Commands) -> None:
    """``tdsl run``: compile, run on CPU and check numbers against references."""
    p = add_command(
        sub,
        "run",
        help="compile, run on CPU and check numbers against references",
        description="Compile with the strategies and with IREE's default pipeline, run every function on CPU on the same deterministic inputs, and compare with the default build, numpy (plain matmul / batch matmul / convolution) and onnxruntime (.onnx models). Without --strategies, compile with IREE's default pipeline only and compare it with numpy and onnxruntime; a note names the references (or says there was none). The same infinity or NaN in the same places agrees; on one side only it is a difference. Exits 1 past tolerance.",
    )
    add_payload_args(
        p,
        cpu_only=True,
        strategies_required=False,
        without="IREE's default build is compared with onnxruntime (.onnx) and numpy (plain matmul / batch matmul / convolution)",
    )
    p.add_argument(
        "--inputs",
        nargs="+",
        type=Path,
        metavar="X.npy|X.npz",
        help="input arrays instead of seeded random ones: one .npy per argument, or one .npz (arrays named by argument)",
    )
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the random inputs (default 0)")
    _add_input_range(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_flag_args(p, writes_flags=False)
    add_limits(p)
    p.set_defaults(run=_cmd_run)


def add_bench(sub: Commands) -> None:
    """``tdsl bench``: time the strategy against IREE's paths and numpy."""
    p = add_command(
        sub,
        "bench",
        help="time the strategy against IREE default, IREE data tiling, onnxruntime, OpenVINO and numpy",
        description="Compile the payload with the strategies, with IREE's default pipeline and with --iree-opt-data-tiling, and time every function side by side with the runtimes users deploy (.onnx models: onnxruntime, and OpenVINO where installed) and numpy (plain matmul / batch matmul / convolution), at each thread count: interleaved repetitions, IREE's builds called in turn in one process and the peers in turn in another, medians, ratios paired by repetition, GFLOP/s (counted from the contractions and convolutions). numpy rows on other than float32/float64 data are marked 'not comparable' and left out of the ratios.",
    )
    add_payload_args(p, cpu_only=True)
    _add_input_range(p)
    p.add_argument(
        "--threads",
        type=thread_counts,
        default=(1,),
        metavar="1|all|N[,N...]",
        help="thread counts of every variant: 1, all (every CPU this process may use) or a list, e.g. 1,all (default 1)",
    )
    p.add_argument("--repetitions", type=positive_int, default=5, help="interleaved rounds, at least 1 (default 5)")
    p.add_argument(
        "--min-time",
        type=positive_float,
        default=0.1,
        metavar="SECONDS",
        help="seconds of timed calls per variant and repetition, above 0 (default 0.1)",
    )
    p.add_argument(
        "--allocator",
        choices=("default", "caching"),
        default="default",
        help="the IREE runtime's device allocator: default (transient buffers from malloc, glibc pinned to a long-running process's steady state: under 32 MiB reused, larger ones fresh on every call) or caching (all reused across calls; its builds are then timed one iree-benchmark-module process each instead of side by side in one)",
    )
    p.add_argument("--no-numpy", action="store_true", help="skip the numpy baseline")
    p.add_argument(
        "--peers",
        type=peer_names,
        default=True,
        metavar="installed|none|NAME[,NAME]",
        help="peer runtimes timed on .onnx models: installed (default: onnxruntime, and OpenVINO with pip install 'tdsl[peers]'), none, or a list of onnxruntime, openvino (each must be installed)",
    )
    p.add_argument(
        "--compare",
        action="append",
        default=[],
        type=compared_set,
        metavar="NAME=FILE[:SET]",
        help="also build and time this strategy set under NAME, side by side with the others (repeatable), e.g. tuned=tuned.py",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="OUT.png",
        help="also write a chart of the speed-up over IREE default, log scale, with the spread of the samples (needs matplotlib: pip install 'tdsl[plot]'; checked before benchmarking)",
    )
    add_flag_args(p, writes_flags=False)
    add_limits(p)
    p.set_defaults(run=_cmd_bench)


def _add_input_range(p: argparse.ArgumentParser) -> None:
    """``--input-range``, shared by run and bench (seeded inputs)."""
    p.add_argument(
        "--input-range",
        action="append",
        default=[],
        metavar="ARG=LO:HI",
        help="range of one argument's seeded values (name, argN or N; integers include HI) (repeatable)",
    )


def _cmd_compile(args: argparse.Namespace) -> int:
    from ..compiler.compile import compile_with_options, default_target

    options = compile_options(args)
    if args.strategies is None:
        default_target(args.target)  # a bad name fails before any work
    if args.baseline and not args.report and not args.json:
        raise ArgumentError("--baseline: the side-by-side report needs --report (or --json)")
    # iree-compile reads .mlir (linalg or torch dialect) itself and reports its own errors;
    # an .onnx model (or --dim) goes through the frontend first.
    payload = (
        args.payload if args.payload.suffix.lower() == ".mlir" and not args.dim else program_of_args(args).mlir_path
    )
    progress = progress_bars(args)
    try:
        report = compile_with_options(
            payload,
            args.strategies,
            args.target,
            args.output,
            options=options,
            dump_ir=args.dump_ir,
            strict=args.strict,
            keep_dump=args.keep_dump,
            baseline=args.baseline and args.strategies is not None,
            progress=progress,
        )
    finally:
        progress.close()
    verbose = verbosity(args) > 0
    if args.json:
        print_json(report.to_json())
    else:
        print(report.text(report=args.report, verbose=verbose).replace(str(payload), str(args.payload)))
        if verbose:
            print("  iree-compile flags: " + " ".join([*report.flags, *report.extra_flags]))
        for warning in report.warnings(verbose=verbose):
            warn(warning, args)
    if args.baseline and args.strategies is None:
        warn("--baseline without --strategies: the report is IREE default's already", args)
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from ..measure.numerics import NumericsFailed
    from ..measure.run import run_with_options
    from ..programs.inputs import parse_input_ranges

    npz = bool(args.inputs) and any(p.suffix == ".npz" for p in args.inputs)
    inputs = load_inputs(args.inputs) if args.inputs and not npz else None
    ranges = parse_input_ranges(args.input_range)
    program = program_of_args(args)
    options = compile_options(args)
    progress = progress_bars(args)
    try:
        report = run_with_options(
            program,
            args.strategies,
            args.target,
            inputs=inputs,
            input_files=args.inputs if npz else (),
            input_names=[str(p) for p in args.inputs] if args.inputs else None,
            seed=args.seed,
            input_ranges=ranges,
            options=options,
            progress=progress,
        )
    except NumericsFailed as err:
        progress.close()
        if args.json:
            print_json(err.report.to_json())
        else:
            print(err.report.text())
        print("tdsl: error: results differ from the reference beyond tolerance", file=sys.stderr)
        return EXIT_VERDICT
    finally:
        progress.close()
    if args.json:
        print_json(report.to_json())
    else:
        print(report.text())
    return EXIT_OK


def _cmd_bench(args: argparse.Namespace) -> int:
    from ..compiler.outputs import check_output_file
    from ..measure.bench import bench_with_options
    from ..measure.bench_plot import plot, plot_available

    if args.plot is not None:  # before any benchmarking: a missing matplotlib loses nothing
        check_output_file(args.plot, "--plot")
        if not plot_available():
            raise ArgumentError("--plot needs matplotlib: pip install 'tdsl[plot]' (or pip install matplotlib)")
    from ..programs.inputs import parse_input_ranges

    ranges = parse_input_ranges(args.input_range)
    program = program_of_args(args)
    options = compile_options(args)
    progress = progress_bars(args)
    try:
        report = bench_with_options(
            program,
            args.strategies,
            args.target,
            threads=args.threads,
            input_ranges=ranges,
            repetitions=args.repetitions,
            min_time_s=args.min_time,
            numpy_baseline=not args.no_numpy,
            peers=args.peers,
            also=dict(args.compare),
            options=options,
            allocator=args.allocator,
            progress=progress,
        )
    finally:
        progress.close()
    if args.plot:
        plot(report, args.plot)
    if args.json:
        print_json(report.to_json())
    else:
        print(report.table())
        if args.plot:
            print(f"plot: {args.plot}")
    return EXIT_OK
