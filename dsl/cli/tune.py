"""``tdsl tune``: search strategy spaces for a program, measured against IREE's paths, and
write the tuned set and its report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ArgumentError, OutputError
from ..targets import CpuTarget
from .arguments import (
    Commands,
    add_command,
    add_flag_args,
    add_limits,
    add_parameters_arg,
    add_program_args,
    host_targets_text,
    nonnegative_int,
    peer_names,
    positive_float,
    positive_int,
    thread_counts,
)
from .exits import EXIT_INTERRUPTED, EXIT_OK, os_reason
from .options import check_output_dir, extra_flags, program_of_args, progress_bars, verbosity


def add_tune(sub: Commands) -> None:
    """``tdsl tune``: search strategy spaces for a program."""
    p = add_command(
        sub,
        "tune",
        help="search strategy spaces for a model, measured against IREE's paths",
        description="Tune a program for this CPU (or rank gfx942 candidates by a cost model, compile-only): the program-level knobs (data tiling, im2col), then each contraction's tiles, one op at a time, by its share of the work; candidates are built in parallel and timed interleaved with the base, then the winners together in the whole model against IREE default and data tiling. A rule is emitted only where it beat the baseline by more than the measured noise, and only if the outputs match IREE default's. Builds and timings are cached (SQLite): a rerun resumes. Writes DIR/tuned.py, DIR/tuned.yaml, DIR/report.json (and DIR/plot.png with --plot). Ctrl-C stops cleanly and writes what was measured (exit 130).",
    )
    p.add_argument("payload", type=Path, help="program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    add_program_args(p)
    add_parameters_arg(p)
    _add_search_args(p)
    _add_measurement_args(p)
    _add_execution_args(p)
    p.add_argument("--plot", action="store_true", help="also write DIR/plot.png (needs pip install 'tdsl[plot]')")
    add_flag_args(p, writes_flags=False)
    add_limits(p)
    p.set_defaults(run=_cmd_tune)


def _add_search_args(p: argparse.ArgumentParser) -> None:
    """``tdsl tune``'s target, output and what it searches: the ops, the space, the budget, the time."""
    p.add_argument(
        "--target",
        default=CpuTarget.default_name,
        help="cpu (measured here) or gfx942 (cost model, compile-only without --device)",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="directory for tuned.py, tuned.yaml, report.json",
    )
    p.add_argument(
        "--ops",
        action="append",
        default=[],
        metavar="TEXT",
        help="tune only dispatches whose name or shapes contain TEXT (repeatable)",
    )
    p.add_argument(
        "--space",
        metavar="FILE.py[:NAME]|FILE.yaml",
        help="search your own space instead of the ready ones: a Space or a StrategySet with knobs defined in FILE.py, or a .yaml/.json set with knob mappings ({knob: choice, name: N, values: [..]})",
    )
    p.add_argument(
        "--budget",
        type=positive_int,
        default=24,
        metavar="N",
        help="candidates built per op and space (default 24; a 2-D matmul has two spaces); on gfx942 the cost model's best N are compiled, at most 6",
    )
    p.add_argument(
        "--time", type=positive_float, metavar="SECONDS", help="stop after this many seconds and emit what was measured"
    )


def _add_measurement_args(p: argparse.ArgumentParser) -> None:
    """How ``tdsl tune`` times and checks candidates: rounds, timed seconds, threads, allocator, seed, numerics."""
    p.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds for the finalists (default 5)")
    p.add_argument(
        "--min-time",
        type=positive_float,
        default=0.05,
        metavar="SECONDS",
        help="seconds of timed calls per build and round (default 0.05)",
    )
    p.add_argument(
        "--threads",
        type=thread_counts,
        default=(1,),
        metavar="1|all|N[,N...]",
        help="the thread count to tune for (every measured run; each candidate gives every thread work), then more counts the emitted set is compared at: 1, all (every CPU this process may use) or a list, e.g. all,1 (default 1)",
    )
    p.add_argument(
        "--peers",
        type=peer_names,
        default=True,
        metavar="installed|none|NAME[,NAME]",
        help="runtimes the emitted set is compared with on an .onnx model: installed (default: onnxruntime, and OpenVINO with pip install 'tdsl[peers]'), none, or a list of onnxruntime, openvino",
    )
    p.add_argument(
        "--allocator",
        choices=("default", "caching"),
        default="default",
        help="the IREE runtime's device allocator for the measured runs",
    )
    p.add_argument(
        "--seed", type=nonnegative_int, default=0, help="seed of the candidate sample and the round order (default 0)"
    )
    p.add_argument("--no-numerics", action="store_true", help="skip the numerics check of the emitted set")


def _add_execution_args(p: argparse.ArgumentParser) -> None:
    """Where ``tdsl tune`` builds and times: its cache, the executor (local or Ray) and the device."""
    p.add_argument(
        "--cache", type=Path, metavar="PATH", help="the tuning cache (default: the user cache dir, tdsl/tune.sqlite)"
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local process pool (default) or a Ray cluster (pip install 'tdsl[ray]')",
    )
    p.add_argument(
        "--address", default="auto", metavar="auto|HOST:PORT", help="the Ray cluster to join (with --executor ray)"
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="parallel builds of the local executor (default: the CPU count)",
    )
    p.add_argument(
        "--device",
        default="",
        metavar="URI",
        help="the IREE device the runners time on: this CPU by default; hip://0 on a machine with an AMD GPU (gfx942 candidates are then measured, not only ranked)",
    )


def _cmd_tune(args: argparse.Namespace) -> int:
    from ..measure.bench_plot import plot_available

    check_output_dir(args.output, "-o")
    if args.plot and not plot_available():
        raise ArgumentError("--plot needs matplotlib: pip install 'tdsl[plot]' (or pip install matplotlib)")
    from ..targets import named, target_names
    from ..tune import TuneOptions, open_cache, open_executor, tunable_kinds, tuner_for, write_outputs
    from ..tune.session import tuning_session

    target = named(args.target)
    if target is None or target.kind not in tunable_kinds():
        tunable = [n for n in target_names() if (t := named(n)) is not None and t.kind in tunable_kinds()]
        raise ArgumentError(f"--target: expected {' or '.join(tunable)}, received {args.target!r}")
    tuner = tuner_for(target.kind)

    options = TuneOptions(
        budget=args.budget,
        time_s=args.time,
        rounds=args.rounds,
        min_time_s=args.min_time,
        threads=args.threads[0],
        compare_threads=tuple(args.threads[1:]),
        peers=args.peers,
        allocator=args.allocator,
        ops=tuple(args.ops),
        seed=args.seed,
        check_numerics=not args.no_numerics,
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
        extra_flags=tuple(extra_flags(args)),
        device=args.device,
        serial_loading=not args.no_serial_loading,
    )
    space = None
    if args.space is not None:
        if not tuner.searches_user_spaces:
            raise ArgumentError(f"--space: tunes a space for this CPU; use --target {host_targets_text()}")
        from ..sets.space import load_space

        space = load_space(args.space)
    program = program_of_args(args)
    progress = progress_bars(args)
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        if verbosity(args) >= 0:
            print(f"tdsl tune: {line}", file=sys.stderr)

    with open_cache(args.cache) as cache, open_executor(args.executor, args.address, args.workers) as executor:
        with tuning_session(executor, cache, progress) as (running, store):
            result = tuner.tune(
                program, options=options, executor=running, cache=store, progress=progress, report=report, space=space
            )
    try:
        paths = write_outputs(result, args.output, with_plot=args.plot)
    except OSError as err:
        raise OutputError(f"-o {str(args.output)!r}: cannot write the results: {os_reason(err)}") from None
    print(result.table())
    for path in paths:
        print(path)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK
