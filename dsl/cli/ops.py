"""``tdsl ops``: every dispatch of a program, with launches, root ops, the ready rules that
cover it and its matchers; ``--profile`` adds each dispatch's share of the time on this CPU
and its roofline (:mod:`tdsl.cli.ops_profile`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ArgumentError
from ..files import atomic_write
from ..sets.loader import as_strategy_set
from .arguments import (
    Commands,
    add_command,
    add_limits,
    add_parameters_arg,
    add_program_args,
    host_targets_text,
    target_names_text,
    thread_counts,
)
from .exits import EXIT_OK
from .ops_profile import Profiled, profiled
from .options import compile_options, print_json, program_of_args, progress_bars


def add_ops(sub: Commands) -> None:
    """``tdsl ops``: list every dispatch of a program."""
    p = add_command(
        sub,
        "ops",
        help="list every dispatch of a program, with launches, root ops and matchers",
        description="Compile the program with IREE's default pipeline for --target and list every dispatch: launches per call, its root op as codegen sees it and as the graph level (data-layout rules) sees it, shapes, element types and loop roles, the ready rules that cover it, and the tdsl matchers that select exactly it (copy-pasteable Python). --emit writes a StrategySet that covers the program: the CPU ready library, or one gfx942 chooser rule per contraction and convolution.",
    )
    p.add_argument("payload", type=Path, help="program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    add_program_args(p)
    p.add_argument("--target", required=True, help=f"{target_names_text()} (or a target of --strategies)")
    p.add_argument(
        "--strategies",
        metavar="FILE[:NAME]",
        help="a ready set whose coverage to report (default on cpu: tdsl.strategies.cpu.auto())",
    )
    p.add_argument(
        "--no-ready", action="store_true", help="cpu: do not report the coverage of tdsl.strategies.cpu.auto()"
    )
    p.add_argument("--emit", type=Path, metavar="FILE.py|FILE.yaml", help="write a StrategySet that covers the program")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.add_argument(
        "--profile",
        action="store_true",
        help="cpu: also run the program's build on this CPU (seeded inputs, about half a second of calls per thread count) and list the dispatches by their share of the time, with the launches the runtime counted (a dispatch in a loop launches once per iteration, where IREE's static count says once); per dispatch a table gives ms, GFLOP/s (GB/s without flops), its share of this machine's roofline (f32 FMA peak and read bandwidth, measured once and cached) and the ready rule or tune space that covers it, marking with ! the dispatches of at least 5%% of the time below 20%% of their roofline",
    )
    p.add_argument(
        "--threads",
        type=thread_counts,
        metavar="N[,N..]|all",
        help="with --profile: the thread counts to profile at, e.g. 1, all or 1,all (all: the CPUs this process may use; default 1)",
    )
    add_parameters_arg(p)
    add_limits(p)
    p.set_defaults(run=_cmd_ops)


def _cmd_ops(args: argparse.Namespace) -> int:
    from ..compiler.compile import default_target
    from ..compiler.ops import list_dispatches
    from ..compiler.outputs import check_output_file
    from ..sets.strategy_set import StrategySet

    target = default_target(args.target)
    if args.emit is not None:
        check_output_file(args.emit, "--emit")
        if args.emit.suffix not in (".py", ".yaml", ".yml"):
            raise ArgumentError(f"--emit {str(args.emit)!r}: expected a .py or .yaml file")
    ready: StrategySet | None = None
    if args.strategies is not None:
        ready = as_strategy_set(args.strategies)
        target = ready.target(args.target)
    elif not args.no_ready:
        from ..strategies.ready import ready_set

        # The listing stays IREE's default pipeline (auto()'s data tiling would show every
        # matmul as the mmt4d it becomes); the coverage is the ready set's.
        ready = ready_set(target)
    if args.emit is not None and ready is None:
        from ..strategies.ready import can_emit

        if not can_emit(target):
            raise ArgumentError(
                f"--emit: target {target.name!r} ({target.kind}) has no ready strategies or chooser to emit; pass --strategies"
            )
    if args.profile and not target.runs_on_host:
        raise ArgumentError(
            f"--profile runs the program on this CPU: expected a {host_targets_text()} target, received {args.target!r} ({target.kind})"
        )
    if args.threads is not None and not args.profile:
        raise ArgumentError(
            f"--threads {','.join(map(str, args.threads))}: expected with --profile, received without it"
        )
    program = program_of_args(args, dynamic=not args.profile)  # a listing compiles without running
    progress = progress_bars(args)
    found: Profiled | None = None
    try:
        with progress.step("compile", "op listing"):
            listing = list_dispatches(program.mlir_path, target, options=compile_options(args), ready=ready)
        if args.profile:
            with progress.step("profile", "dispatch times and roofline"):
                found = profiled(program, target, listing, args.threads or (1,), args)
                listing = found.listing
    finally:
        progress.close()
    if args.emit is not None:
        from ..strategies.emit import emit

        emitted = emit(listing, target, f"{Path(args.payload).stem}_{target.name}", ready)
        text = emitted.python() if args.emit.suffix == ".py" else emitted.yaml()
        atomic_write(args.emit, text)
    if args.json:
        print_json(found.to_json() if found else listing.to_json())
    else:
        first = found.profiles[0] if found else None
        print(listing.text(first.shares if first else None).replace(str(program.mlir_path), str(args.payload)))
        if found is not None and first is not None:
            threads = f"{first.threads} thread{'s' if first.threads > 1 else ''}"
            print(
                f"  (time: the share of its function's time per call, profiled by the IREE runtime on this CPU, {threads}; launches as the runtime counted them)"
            )
            print("\n".join(found.text()))
        for note in program.notes:
            print(f"  note: {note}")
        if args.emit is not None:
            print(
                f"emitted {len(emitted.strategies.rules)} rules to {args.emit}"
                + (f" ({len(emitted.left_out)} notes on what they leave out)" if emitted.left_out else "")
            )
    return EXIT_OK
