"""``tdsl ops``: every dispatch of a program, with launches, root ops, the ready rules that
cover it and its matchers; ``--profile`` adds each dispatch's share of the time on this CPU."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..compiler.ops import ProgramOps
from ..errors import ArgumentError
from ..files import atomic_write
from ..programs.program import Program
from ..sets.loader import as_strategy_set
from ..targets import Target
from .arguments import (
    Commands,
    add_command,
    add_limits,
    add_parameters_arg,
    add_program_args,
    host_targets_text,
    target_names_text,
)
from .exits import EXIT_OK
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
        help="cpu: also run the program's build on this CPU (1 thread, seeded inputs, about half a second of calls) and list the dispatches by their share of the time, with the launches the runtime counted (a dispatch in a loop launches once per iteration, where IREE's static count says once)",
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
    program = program_of_args(args)
    progress = progress_bars(args)
    shares: dict[str, float] | None = None
    try:
        with progress.step("compile", "op listing"):
            listing = list_dispatches(program.mlir_path, target, options=compile_options(args), ready=ready)
        if args.profile:
            with progress.step("profile", "dispatch times"):
                listing, shares = _profiled(program, target, listing, args)
    finally:
        progress.close()
    if args.emit is not None:
        from ..strategies.emit import emit

        emitted = emit(listing, target, f"{Path(args.payload).stem}_{target.name}", ready)
        text = emitted.python() if args.emit.suffix == ".py" else emitted.yaml()
        atomic_write(args.emit, text)
    if args.json:
        print_json(listing.to_json(shares))
    else:
        print(listing.text(shares).replace(str(program.mlir_path), str(args.payload)))
        if shares is not None:
            print(
                "  (time: the share of its function's time per call, profiled by the IREE runtime on this CPU, 1 thread; launches as the runtime counted them)"
            )
        for note in program.notes:
            print(f"  note: {note}")
        if args.emit is not None:
            print(
                f"emitted {len(emitted.strategies.rules)} rules to {args.emit}"
                + (f" ({len(emitted.left_out)} notes on what they leave out)" if emitted.left_out else "")
            )
    return EXIT_OK


def _profiled(
    program: Program, target: Target, listing: ProgramOps, args: argparse.Namespace
) -> tuple[ProgramOps, dict[str, float]]:
    """``listing`` with the launches the runtime counted, and each dispatch's share of its
    function's time: ``target``'s build of ``program`` (no rules, as listed) run on this CPU
    with seeded inputs, one function at a time. Failures are one line."""
    import tempfile

    import numpy as np

    from ..compiler.iree_compile import run_iree_compile
    from ..measure.dispatch_profile import DispatchTime, calls_for, dispatch_times, time_shares, with_measured_launches
    from ..measure.timing import iree_sample
    from ..programs.inputs import make_inputs
    from ..programs.parameters import check_runnable
    from ..programs.signatures import signatures

    check_runnable(program)
    profile: dict[str, DispatchTime] = {}
    shares: dict[str, float] = {}
    parameters = [a.spec for a in program.parameters]
    with tempfile.TemporaryDirectory(prefix="tdsl-ops-profile-") as tmp:
        vmfb = Path(tmp) / "module.vmfb"
        options = compile_options(args)
        run_iree_compile(program.mlir_path, [*target.compile_flags(), *options.extra_flags], vmfb, options)
        for sig in signatures(program):
            inputs = []
            for i, value in enumerate(make_inputs(sig, seed=0)):
                inputs.append(Path(tmp) / f"{sig.function}.{i}.npy")
                np.save(inputs[-1], value)
            once = iree_sample(vmfb, sig.function, inputs, 1, 0.05, parameters=parameters)
            measured = dispatch_times(vmfb, sig.function, inputs, calls_for(once), parameters=parameters)
            profile.update(measured)
            shares.update(time_shares(measured))
    return with_measured_launches(listing, profile), shares
