"""The ``tdsl`` command line: render, flags, show, schema, compile, run, bench.

``-v`` lists every rule that matched nothing (and the iree-compile flags); ``-q`` leaves
out progress and warnings. Long work (compiles, benchmark samples) shows progress bars with
an ETA on stderr when stderr is a terminal.

Every failure is one line on stderr (``tdsl: error: ...``) and an exit code:

* 0: success.
* 1: a verdict: ``run`` found results past the element type's tolerance, or
  ``compile --strict`` found a rule that matched nothing.
* 2: bad input: an invalid strategy or command-line value, a strategy file that cannot be
  read, a payload it does not match, a script that does not verify, a compiler failure
  (crash, memory cap, timeout or error; the line names a directory that keeps the
  compiler's whole output), an output path that cannot be written, any OS error.
* 3: an internal error of tdsl (a bug: the line names the exception; ``TDSL_TRACEBACK=1``
  also prints the traceback).
* 130: interrupted (Ctrl-C). A render or compile that is interrupted leaves the earlier
  outputs as they were.
* 141: the reader of stdout went away (``tdsl show ... | head``); nothing is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

from .compiler.phases import PHASES
from .compiler.options import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, MIN_MEMORY_GB, CompileOptions
from .compiler.flags import check_flag, read_flags_file, rendered_flags
from .measure.machine import json_header
from .compiler.progress import NO_PROGRESS, Progress, RichProgress
from . import __version__
from .errors import ArgumentError, OutputError, RenderError, StrategyError, StrategyNotApplied, TdslError
from .files import atomic_write, failure_dir, replace_files
from .sets.loader import dump, load
from .render import render
from .render.scripts import FLAGS_FILE, RENDER_FILES
from .targets import CpuTarget

EXIT_OK, EXIT_VERDICT, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 3, 130, 141

EPILOG = f"""exit codes:
  {EXIT_OK}    success
  {EXIT_VERDICT}    a verdict: numbers past tolerance (run), a rule that matched nothing (compile --strict)
  {EXIT_BAD_INPUT}    bad input: strategy, strategy file, payload, arguments, script, compiler failure,
       unwritable output, OS error (one line on stderr)
  {EXIT_INTERNAL}    internal error of tdsl (a bug; TDSL_TRACEBACK=1 prints the traceback)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); earlier outputs are left as they were
A compiler failure keeps its evidence (full output, command, scripts, dumps) in a
tdsl-failure-* directory under $TDSL_FAILURE_DIR or the system temporary directory.
A compiler failure is bad input (2), not a code of its own: tdsl cannot tell a compiler
bug that a strategy value sets off from a strategy IREE refuses; 3 is tdsl's own bug."""

SERIAL_LOADING_HELP = (
    "do not add --mlir-disable-threading. tdsl adds it when a tuning spec or codegen library "
    "is injected: IREE 3.13 can deadlock when several executables load such a library in "
    "parallel (a worker blocked in getOrLoadTransformLibraryModule; seen in about 1 of 15-60 "
    "compiles). Single-threaded compiles cost about 20%% more time"
)

# Every file a render can write: a new render removes those of an earlier one it does not write.


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        if "--iree-flag: expected one argument" in message:
            message += " (spell it with '=': --iree-flag=--name=value)"
        self.exit(EXIT_BAD_INPUT, f"tdsl: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------------------
# Argument types: a bad value is argparse's one-line error, exit 2, before any work.


def _number(text: str, kind: Callable[[str], Any], what: str) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (seconds)."""
    value: float = _number(text, float, "a number above 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, received {text!r}")
    return value


def positive_int(text: str) -> int:
    value: int = _number(text, int, "an integer of at least 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 1, received {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    value: int = _number(text, int, "an integer of at least 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 0, received {text!r}")
    return value


def thread_counts(text: str) -> tuple[int, ...]:
    """``"1,2"`` -> (1, 2): a comma-separated list of positive integers."""
    what = "a comma-separated list of thread counts of at least 1, e.g. 1,2"
    parts = [p.strip() for p in text.split(",")]
    try:
        counts = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}") from None
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"expected {what}, received {text!r}")
    return counts


def memory_gb(text: str) -> float:
    """An address-space cap in GiB that lets iree-compile start (at least MIN_MEMORY_GB)."""
    value: float = _number(text, float, f"a number of GiB of at least {MIN_MEMORY_GB:g}")
    if value < MIN_MEMORY_GB:
        raise argparse.ArgumentTypeError(
            f"expected at least {MIN_MEMORY_GB:g} GiB (iree-compile needs about 0.4 GiB of address "
            f"space just to start), received {text}"
        )
    return value


# --------------------------------------------------------------------------------------
# Output paths: refused before any work.


def _nearest_existing(path: Path) -> Path:
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def check_output_dir(path: Path, what: str) -> None:
    """An output directory: an existing directory, or creatable under a writable one."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"{what} {str(path)!r}: expected a directory, received an existing file")
    existing = _nearest_existing(path)
    if not existing.is_dir():
        raise OutputError(f"{what} {str(path)!r}: {str(existing)!r} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {str(path)!r}: the directory {str(existing)!r} is not writable")


# --------------------------------------------------------------------------------------
# Commands.


def extra_flags(args: argparse.Namespace) -> list[str]:
    """The flags of ``--flags-file`` (paths resolved against the file's directory), then
    those of ``--iree-flag``, in order: on the command line the last occurrence wins."""
    flags: list[str] = []
    for path in getattr(args, "flags_file", None) or ():
        flags += read_flags_file(path)
    return flags + [check_flag(f) for f in getattr(args, "iree_flag", None) or ()]


def compile_options(args: argparse.Namespace) -> CompileOptions:
    """``--timeout``, ``--memory-gb``, the extra flags (:func:`extra_flags`) and
    ``--no-serial-loading`` as one value."""
    return CompileOptions(
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
        extra_flags=tuple(extra_flags(args)),
        serial_loading=not getattr(args, "no_serial_loading", False),
    )


def _cmd_render(args: argparse.Namespace) -> int:
    check_output_dir(args.output, "-o")
    extra = extra_flags(args)
    strategy_set = load(args.strategies)
    rendered = render(strategy_set, args.target)
    files = rendered.files(args.output)
    flags = rendered_flags(rendered, args.output, serial_loading=not args.no_serial_loading, relative=args.relative, extra=extra)
    files[FLAGS_FILE] = "\n".join(flags) + "\n"
    try:
        paths = replace_files(args.output, files, owned=RENDER_FILES)
    except OSError as err:
        raise OutputError(f"-o {str(args.output)!r}: cannot write the scripts: {_os_reason(err)}") from None
    for path in paths:
        print(path)
    return EXIT_OK


def _cmd_flags(args: argparse.Namespace) -> int:
    extra = extra_flags(args)
    strategy_set = load(args.strategies)
    rendered = render(strategy_set, args.target)
    flags = rendered_flags(
        rendered,
        args.output,
        include_target=not args.no_target_flags,
        serial_loading=not args.no_serial_loading,
        relative=args.relative,
        extra=extra,
    )
    for flag in flags:
        print(flag)
    return EXIT_OK


def _target_names() -> str:
    """The default targets' names, for help texts (``cpu or gfx942``)."""
    from .targets import target_names

    return " or ".join(target_names())


def _host_targets() -> str:
    """The names of the default targets whose modules run on this machine (``cpu``)."""
    from .targets import default_targets

    return " or ".join(t.name for t in default_targets() if t.runs_on_host)


def _verbosity(args: argparse.Namespace) -> int:
    """-1 quiet, 0 normal, 1+ verbose."""
    return -1 if getattr(args, "quiet", False) else int(getattr(args, "verbose", 0) or 0)


def _progress(args: argparse.Namespace) -> Progress:
    """Progress bars on a terminal (stderr), unless -q."""
    if _verbosity(args) < 0 or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return NO_PROGRESS
    return RichProgress()


def _print_json(data: dict[str, Any]) -> None:
    """A --json report: schema version, tdsl and IREE versions and the machine first."""
    print(json.dumps({**json_header(), **data}, indent=2))


def _warn(message: str, args: argparse.Namespace) -> None:
    if _verbosity(args) >= 0:
        print(f"tdsl: warning: {message}", file=sys.stderr)


def _cmd_compile(args: argparse.Namespace) -> int:
    from .compiler.compile import compile_with_options, default_target

    options = compile_options(args)
    if args.strategies is None:
        default_target(args.target)  # a bad name fails before any work
    if args.baseline and not args.report and not args.json:
        raise ArgumentError("--baseline: the side-by-side report needs --report (or --json)")
    # iree-compile reads .mlir (linalg or torch dialect) itself and reports its own errors;
    # an .onnx model (or --dim) goes through the frontend first.
    payload = args.payload if args.payload.suffix.lower() == ".mlir" and not args.dim else _program(args).mlir_path
    progress = _progress(args)
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
    verbose = _verbosity(args) > 0
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.text(report=args.report, verbose=verbose))
        if verbose:
            print("  iree-compile flags: " + " ".join([*report.flags, *report.extra_flags]))
        for warning in report.warnings(verbose=verbose):
            _warn(warning, args)
    if args.baseline and args.strategies is None:
        _warn("--baseline without --strategies: the report is IREE default's already", args)
    return EXIT_OK


def load_inputs(paths: Sequence[Path]) -> list[Any]:
    """The arrays of ``--inputs``: each an existing ``.npy`` file (no pickles)."""
    import numpy as np

    arrays = []
    for path in paths:
        if path.is_dir():
            raise ArgumentError(f"--inputs {str(path)!r}: expected a .npy file, received a directory")
        if not path.is_file():
            raise ArgumentError(f"--inputs {str(path)!r}: the file does not exist")
        try:
            array = np.load(path, allow_pickle=False)
        except OSError as err:
            raise ArgumentError(f"--inputs {str(path)!r}: cannot be read: {_os_reason(err)}") from None
        except (ValueError, EOFError) as err:
            detail = " ".join(str(err).split())
            raise ArgumentError(f"--inputs {str(path)!r}: expected a .npy array file (numpy.save), received other data ({detail})") from None
        if not isinstance(array, np.ndarray):
            if hasattr(array, "close"):
                array.close()
            raise ArgumentError(f"--inputs {str(path)!r}: expected a .npy array file, received a .npz archive")
        arrays.append(array)
    return arrays


def _cmd_run(args: argparse.Namespace) -> int:
    from .measure.numerics import NumericsFailed
    from .measure.run import run_with_options
    from .programs.inputs import parse_input_ranges

    npz = bool(args.inputs) and any(p.suffix == ".npz" for p in args.inputs)
    inputs = load_inputs(args.inputs) if args.inputs and not npz else None
    ranges = parse_input_ranges(args.input_range)
    program = _program(args)
    options = compile_options(args)
    progress = _progress(args)
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
            _print_json(err.report.to_json())
        else:
            print(err.report.text())
        print("tdsl: error: results differ from the reference beyond tolerance", file=sys.stderr)
        return EXIT_VERDICT
    finally:
        progress.close()
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.text())
    return EXIT_OK


def _cmd_bench(args: argparse.Namespace) -> int:
    from .measure.bench import bench_with_options, plot, plot_available
    from .compiler.compile import check_output_file

    if args.plot is not None:  # before any benchmarking: a missing matplotlib loses nothing
        check_output_file(args.plot, "--plot")
        if not plot_available():
            raise ArgumentError("--plot needs matplotlib: pip install 'tdsl[plot]' (or pip install matplotlib)")
    from .programs.inputs import parse_input_ranges

    ranges = parse_input_ranges(args.input_range)
    program = _program(args)
    options = compile_options(args)
    progress = _progress(args)
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
            options=options,
            allocator=args.allocator,
            progress=progress,
        )
    finally:
        progress.close()
    if args.plot:
        plot(report, args.plot)
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.table())
        if args.plot:
            print(f"plot: {args.plot}")
    return EXIT_OK


def _cmd_ops(args: argparse.Namespace) -> int:
    from .compiler.compile import check_output_file, default_target
    from .compiler.ops import list_dispatches
    from .sets.strategy_set import StrategySet

    target = default_target(args.target)
    if args.emit is not None:
        check_output_file(args.emit, "--emit")
        if args.emit.suffix not in (".py", ".yaml", ".yml"):
            raise ArgumentError(f"--emit {str(args.emit)!r}: expected a .py or .yaml file")
    ready: StrategySet | None = None
    if args.strategies is not None:
        ready = load(args.strategies)
        target = ready.target(args.target)
    elif not args.no_ready:
        from .strategies.ready import ready_set

        # The listing stays IREE's default pipeline (auto()'s data tiling would show every
        # matmul as the mmt4d it becomes); the coverage is the ready set's.
        ready = ready_set(target)
    if args.emit is not None and ready is None:
        from .strategies.ready import can_emit

        if not can_emit(target):
            raise ArgumentError(f"--emit: target {target.name!r} ({target.kind}) has no ready strategies or chooser to emit; pass --strategies")
    if args.profile and not target.runs_on_host:
        raise ArgumentError(f"--profile runs the program on this CPU: expected a {_host_targets()} target, received {args.target!r} ({target.kind})")
    program = _program(args)
    progress = _progress(args)
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
        from .strategies.emit import emit

        emitted = emit(listing, target, f"{Path(args.payload).stem}_{target.name}", ready)
        text = emitted.python() if args.emit.suffix == ".py" else emitted.yaml()
        atomic_write(args.emit, text)
    if args.json:
        _print_json(listing.to_json(shares))
    else:
        print(listing.text(shares).replace(str(program.mlir_path), str(args.payload)))
        if shares is not None:
            print("  (time: the share of its function's time per call, profiled by the IREE runtime on this CPU, 1 thread; launches as the runtime counted them)")
        for note in program.notes:
            print(f"  note: {note}")
        if args.emit is not None:
            print(f"emitted {len(emitted.strategies.rules)} rules to {args.emit}"
                  + (f" ({len(emitted.left_out)} notes on what they leave out)" if emitted.left_out else ""))
    return EXIT_OK


def _profiled(program: Any, target: Any, listing: Any, args: argparse.Namespace) -> tuple[Any, dict[str, float]]:
    """``listing`` with the launches the runtime counted, and each dispatch's share of its
    function's time: ``target``'s build of ``program`` (no rules, as listed) run on this CPU
    with seeded inputs, one function at a time. Failures are one line."""
    import tempfile

    import numpy as np

    from .measure.dispatch_profile import DispatchTime, calls_for, dispatch_times, time_shares, with_measured_launches
    from .programs.inputs import make_inputs
    from .programs.parameters import check_runnable
    from .programs.signatures import signatures
    from .compiler.iree_compile import run_iree_compile
    from .measure.timing import iree_sample

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


def _cmd_tune(args: argparse.Namespace) -> int:
    from .compiler.compile import check_output_file
    from .measure.bench import plot_available

    check_output_dir(args.output, "-o")
    if args.plot and not plot_available():
        raise ArgumentError("--plot needs matplotlib: pip install 'tdsl[plot]' (or pip install matplotlib)")
    from .targets import named, target_names
    from .tune import TuneOptions, open_cache, open_executor, tunable_kinds, tuner_for, write_outputs
    from .tune.session import tuning_session

    target = named(args.target)
    if target is None or target.kind not in tunable_kinds():
        tunable = [n for n in target_names() if (t := named(n)) is not None and t.kind in tunable_kinds()]
        raise ArgumentError(f"--target: expected {' or '.join(tunable)}, received {args.target!r}")
    tuner = tuner_for(target.kind)

    options = TuneOptions(
        budget=args.budget, time_s=args.time, rounds=args.rounds, min_time_s=args.min_time, threads=args.threads,
        allocator=args.allocator, ops=tuple(args.ops), seed=args.seed, check_numerics=not args.no_numerics,
        timeout_s=args.timeout, memory_gb=args.memory_gb, extra_flags=tuple(extra_flags(args)), device=args.device,
        serial_loading=not args.no_serial_loading,
    )
    space = None
    if args.space is not None:
        if not tuner.searches_user_spaces:
            raise ArgumentError(f"--space: tunes a space for this CPU; use --target {_host_targets()}")
        from .sets.space import load_space

        space = load_space(args.space)
    program = _program(args)
    progress = _progress(args)
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        if _verbosity(args) >= 0:
            print(f"tdsl tune: {line}", file=sys.stderr)

    with open_cache(args.cache) as cache, open_executor(args.executor, args.address, args.workers) as executor:
        with tuning_session(executor, cache, progress) as (running, store):
            result = tuner.tune(program, options=options, executor=running, cache=store, progress=progress, report=report, space=space)
    try:
        paths = write_outputs(result, args.output, with_plot=args.plot)
    except OSError as err:
        raise OutputError(f"-o {str(args.output)!r}: cannot write the results: {_os_reason(err)}") from None
    print(result.table())
    for path in paths:
        print(path)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    from .importer import import_command

    if args.output is not None:
        from .compiler.compile import check_output_file

        check_output_file(args.output, "-o")
    return import_command(args.specs if len(args.specs) > 1 else args.specs[0], args.output, args.target, args.allow_raw, args.kind)


def _cmd_show(args: argparse.Namespace) -> int:
    sys.stdout.write(dump(load(args.strategies), args.format))
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from .schema import strategy_file_schema

    text = json.dumps(strategy_file_schema(), indent=2) + "\n"
    if args.output is not None:
        from .compiler.compile import check_output_file

        check_output_file(args.output, "-o")
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS", help=f"seconds per iree-compile run, above 0 (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--memory-gb", type=memory_gb, default=DEFAULT_MEMORY_GB, metavar="GIB", help=f"address-space cap of iree-compile in GiB, at least {MIN_MEMORY_GB:g} (default {DEFAULT_MEMORY_GB:g})")


def _add_program_args(p: argparse.ArgumentParser) -> None:
    """--dim and --weights-seed: how a model becomes a static program."""
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="fix a dynamic dimension: an ONNX dim_param (batch=1), argN.D or INPUT.D (repeatable)")
    p.add_argument("--weights-seed", type=nonnegative_int, default=0, metavar="N",
                   help="seed of the weights drawn for an .onnx model committed without them (default 0)")


def _program(args: argparse.Namespace) -> Any:
    """The payload of a compile/run/bench/ops command as a loaded program."""
    from .programs.load import parse_dims
    from .programs.load import program_of

    return program_of(args.payload, parse_dims(args.dim), args.weights_seed, getattr(args, "parameters", []))


def _add_parameters_arg(p: argparse.ArgumentParser) -> None:
    """--parameters, for the commands that run the program."""
    p.add_argument("--parameters", action="append", default=[], metavar="[SCOPE=]FILE.irpa",
                   help="parameter archive the .mlir program's parameter globals read at load (scope default: model; repeatable)")


def _add_payload_args(p: argparse.ArgumentParser, cpu_only: bool, strategies_required: bool = True) -> None:
    p.add_argument("payload", type=Path, help="payload program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    _add_program_args(p)
    if strategies_required:
        p.add_argument("--strategies", required=True, metavar="FILE[:NAME]", help="strategy file")
    else:
        p.add_argument(
            "--strategies",
            metavar="FILE[:NAME]",
            help=f"strategy file; without it, IREE's default pipeline for --target ({_target_names()}): "
            "the report to read before writing a rule",
        )
    if cpu_only:
        _add_parameters_arg(p)
        cpu = CpuTarget.default_name
        p.add_argument("--target", default=cpu, help=f"CPU target name in the strategy set (default: {cpu})")
    else:
        p.add_argument("--target", required=True, help=f"target name in the strategy set, e.g. {_target_names()}")


def _add_strategy_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file: .py (optionally :NAME of a StrategySet), .yaml or .json")
    p.add_argument("--target", required=True, help=f"target name in the strategy set, e.g. {_target_names()}")


def _add_flag_args(p: argparse.ArgumentParser, writes_flags: bool) -> None:
    """--iree-flag, --flags-file, --no-serial-loading (and --relative for render/flags)."""
    into = " (written into flags.txt after tdsl's flags)" if writes_flags else " (to every build, after tdsl's flags)"
    p.add_argument(
        "--iree-flag",
        action="append",
        metavar="FLAG",
        help="one more iree-compile flag, repeatable; spell it with '=': --iree-flag=--iree-opt-level=O3" + into,
    )
    p.add_argument(
        "--flags-file",
        action="append",
        type=Path,
        metavar="FILE",
        help="iree-compile flags from FILE (shell words, # comments), e.g. a flags.txt; relative paths "
        "in it are taken relative to FILE's directory" + into,
    )
    p.add_argument("--no-serial-loading", action="store_true", help=SERIAL_LOADING_HELP)
    if writes_flags:
        p.add_argument(
            "--relative",
            action="store_true",
            help="script paths relative to the output directory (flags.txt's own), so that the directory can be "
            "moved or committed; iree-compile resolves them against its working directory, so run it from "
            "there (cd DIR && iree-compile $(cat flags.txt) ../payload.mlir) or pass the file to "
            "tdsl compile --flags-file, which resolves them against the file's directory",
        )


def _verbosity_parent(top: bool) -> argparse.ArgumentParser:
    """-v / -q, accepted before the command (tdsl -v compile) and after it."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    default_v: Any = 0 if top else argparse.SUPPRESS
    default_q: Any = False if top else argparse.SUPPRESS
    group.add_argument("-v", "--verbose", action="count", default=default_v, help="more detail: every rule that matched nothing, the iree-compile flags")
    group.add_argument("-q", "--quiet", action="store_true", default=default_q, help="no progress bars, no warnings (errors still print)")
    return parent


def _compiler_version() -> str:
    try:
        return version("iree-base-compiler")
    except PackageNotFoundError:
        return "not installed"


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="tdsl",
        description="Render tdsl strategies to verified IREE transform-dialect scripts, compile, run and benchmark them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_verbosity_parent(top=True)],
    )
    top.add_argument("--version", action="version", version=f"tdsl {__version__} (iree-base-compiler {_compiler_version()})")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common: dict[str, Any] = {
        "epilog": EPILOG,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
        "parents": [_verbosity_parent(top=False)],
    }

    p = sub.add_parser("render", help="write the scripts and flags.txt for one target", description="Render, verify and write every script the target needs, plus DIR/flags.txt (one iree-compile flag per line).", **common)
    _add_strategy_args(p)
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="output directory")
    _add_flag_args(p, writes_flags=True)
    p.set_defaults(run=_cmd_render)

    p = sub.add_parser("flags", help="print the iree-compile flags for one target", description="Render and verify, then print the iree-compile flags that inject the scripts as `tdsl render -o DIR` writes them (nothing is written).", **common)
    _add_strategy_args(p)
    p.add_argument("-o", "--output", type=Path, default=Path("."), metavar="DIR", help="directory the scripts are (to be) written to (default: .)")
    p.add_argument("--no-target-flags", action="store_true", help="print only the script flags, not the target selection")
    _add_flag_args(p, writes_flags=True)
    p.set_defaults(run=_cmd_flags)

    p = sub.add_parser("compile", help="compile a payload with the strategies and report what applied", description="Render and verify the strategies, run iree-compile with them under a timeout and memory cap, and report which rules applied to which dispatches. Any 'error:' from iree-compile is a failure. Without --strategies, compile with IREE's default pipeline for --target (cpu or gfx942) and report it.", **common)
    _add_payload_args(p, cpu_only=False, strategies_required=False)
    p.add_argument("-o", "--output", type=Path, metavar="OUT.vmfb", help="write the compiled module (.vmfb) here")
    p.add_argument("--dump-ir", choices=PHASES, help="also write the IR at this phase next to the output")
    p.add_argument("--strict", action="store_true", help="a rule of yours that matches nothing is an error (exit 1); ready-library rules (Rule.optional) never are")
    p.add_argument("--report", action="store_true", help="per dispatch: pipeline and lowering config (tile sizes per level); gfx942: also LDS, VGPR/AGPR/SGPR, spills, MFMA count, waves per SIMD")
    p.add_argument("--baseline", action="store_true", help="also compile with IREE's default pipeline and print its --report next to the strategy's, per dispatch")
    p.add_argument("--keep-dump", type=Path, metavar="DIR", help="keep IREE's executable dump (configured IR, assembly, binaries) and the rendered scripts (DIR/scripts) in DIR (new, empty, or an earlier --keep-dump's) and print its path")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_flag_args(p, writes_flags=False)
    _add_limits(p)
    p.set_defaults(run=_cmd_compile)

    p = sub.add_parser("run", help="compile, run on CPU and check numbers against references", description="Compile with the strategies and with IREE's default pipeline, run every function on CPU on the same deterministic inputs, and compare with the default build and numpy (plain matmul / batch matmul / convolution). Exits 1 past tolerance.", **common)
    _add_payload_args(p, cpu_only=True)
    p.add_argument("--inputs", nargs="+", type=Path, metavar="X.npy|X.npz",
                   help="input arrays instead of seeded random ones: one .npy per argument, or one .npz (arrays named by argument)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--input-range", action="append", default=[], metavar="ARG=LO:HI",
                   help="range of one argument's seeded values (name, argN or N; integers include HI) (repeatable)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_flag_args(p, writes_flags=False)
    _add_limits(p)
    p.set_defaults(run=_cmd_run)

    p = sub.add_parser("bench", help="time the strategy against IREE default, IREE data tiling and numpy", description="Compile the payload with the strategies, with IREE's default pipeline and with --iree-opt-data-tiling, and time every function side by side with numpy (plain matmul / batch matmul / convolution): interleaved repetitions, IREE's builds called in turn in one process in each, medians, ratios paired by repetition, GFLOP/s (counted from the contractions and convolutions). numpy rows on other than float32/float64 data are marked 'not comparable' and left out of the ratios.", **common)
    _add_payload_args(p, cpu_only=True)
    p.add_argument("--input-range", action="append", default=[], metavar="ARG=LO:HI",
                   help="range of one argument's seeded values (name, argN or N; integers include HI) (repeatable)")
    p.add_argument("--threads", type=thread_counts, default=(1,), metavar="N[,N...]", help="comma-separated thread counts, e.g. 1,2 (default 1)")
    p.add_argument("--repetitions", type=positive_int, default=5, help="interleaved rounds, at least 1 (default 5)")
    p.add_argument("--min-time", type=positive_float, default=0.1, metavar="SECONDS", help="seconds of timed calls per variant and repetition, above 0 (default 0.1)")
    p.add_argument("--allocator", choices=("default", "caching"), default="default",
                   help="the IREE runtime's device allocator: default (transient buffers from malloc, glibc pinned to a long-running process's steady state: under 32 MiB reused, larger ones fresh on every call) or caching (all reused across calls; its builds are then timed one iree-benchmark-module process each instead of side by side in one)")
    p.add_argument("--no-numpy", action="store_true", help="skip the numpy baseline")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--plot", type=Path, metavar="OUT.png", help="also write a chart of the speed-up over IREE default, log scale, with the spread of the samples (needs matplotlib: pip install 'tdsl[plot]'; checked before benchmarking)")
    _add_flag_args(p, writes_flags=False)
    _add_limits(p)
    p.set_defaults(run=_cmd_bench)

    p = sub.add_parser("ops", help="list every dispatch of a program, with launches, root ops and matchers", description="Compile the program with IREE's default pipeline for --target and list every dispatch: launches per call, its root op as codegen sees it and as the graph level (data-layout rules) sees it, shapes, element types and loop roles, the ready rules that cover it, and the tdsl matchers that select exactly it (copy-pasteable Python). --emit writes a StrategySet that covers the program: the CPU ready library, or one gfx942 chooser rule per contraction and convolution.", **common)
    p.add_argument("payload", type=Path, help="program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    _add_program_args(p)
    p.add_argument("--target", required=True, help=f"{_target_names()} (or a target of --strategies)")
    p.add_argument("--strategies", metavar="FILE[:NAME]", help="a ready set whose coverage to report (default on cpu: tdsl.strategies.cpu.auto())")
    p.add_argument("--no-ready", action="store_true", help="cpu: do not report the coverage of tdsl.strategies.cpu.auto()")
    p.add_argument("--emit", type=Path, metavar="FILE.py|FILE.yaml", help="write a StrategySet that covers the program")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.add_argument("--profile", action="store_true", help="cpu: also run the program's build on this CPU (1 thread, seeded inputs, about half a second of calls) and list the dispatches by their share of the time, with the launches the runtime counted (a dispatch in a loop launches once per iteration, where IREE's static count says once)")
    _add_parameters_arg(p)
    _add_limits(p)
    p.set_defaults(run=_cmd_ops)

    p = sub.add_parser("tune", help="search strategy spaces for a model, measured against IREE's paths", description="Tune a program for this CPU (or rank gfx942 candidates by a cost model, compile-only): the program-level knobs (data tiling, im2col), then each contraction's tiles, one op at a time, by its share of the work; candidates are built in parallel and timed interleaved with the base, then the winners together in the whole model against IREE default and data tiling. A rule is emitted only where it beat the baseline by more than the measured noise, and only if the outputs match IREE default's. Builds and timings are cached (SQLite): a rerun resumes. Writes DIR/tuned.py, DIR/tuned.yaml, DIR/report.json (and DIR/plot.png with --plot). Ctrl-C stops cleanly and writes what was measured (exit 130).", **common)
    p.add_argument("payload", type=Path, help="program: .onnx model, or .mlir (torch/ONNX dialect or linalg)")
    _add_program_args(p)
    _add_parameters_arg(p)
    p.add_argument("--target", default=CpuTarget.default_name, help="cpu (measured here) or gfx942 (cost model, compile-only without --device)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="directory for tuned.py, tuned.yaml, report.json")
    p.add_argument("--ops", action="append", default=[], metavar="TEXT", help="tune only dispatches whose name or shapes contain TEXT (repeatable)")
    p.add_argument("--space", metavar="FILE.py[:NAME]|FILE.yaml", help="search your own space instead of the ready ones: a Space or a StrategySet with knobs defined in FILE.py, or a .yaml/.json set with knob mappings ({knob: choice, name: N, values: [..]})")
    p.add_argument("--budget", type=positive_int, default=24, metavar="N", help="candidates built per op and space (default 24; a 2-D matmul has two spaces); on gfx942 the cost model's best N are compiled, at most 6")
    p.add_argument("--time", type=positive_float, metavar="SECONDS", help="stop after this many seconds and emit what was measured")
    p.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds for the finalists (default 5)")
    p.add_argument("--min-time", type=positive_float, default=0.05, metavar="SECONDS", help="seconds of timed calls per build and round (default 0.05)")
    p.add_argument("--threads", type=positive_int, default=1, help="threads of the measured runs (default 1)")
    p.add_argument("--allocator", choices=("default", "caching"), default="default", help="the IREE runtime's device allocator for the measured runs")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the candidate sample and the round order (default 0)")
    p.add_argument("--no-numerics", action="store_true", help="skip the numerics check of the emitted set")
    p.add_argument("--cache", type=Path, metavar="PATH", help="the tuning cache (default: the user cache dir, tdsl/tune.sqlite)")
    p.add_argument("--executor", choices=("local", "ray"), default="local", help="local process pool (default) or a Ray cluster (pip install 'tdsl[ray]')")
    p.add_argument("--address", default="auto", metavar="auto|HOST:PORT", help="the Ray cluster to join (with --executor ray)")
    p.add_argument("--workers", type=positive_int, metavar="N", help="parallel builds of the local executor (default: the CPU count)")
    p.add_argument("--device", default="", metavar="URI", help="the IREE device the runners time on: this CPU by default; hip://0 on a machine with an AMD GPU (gfx942 candidates are then measured, not only ranked)")
    p.add_argument("--plot", action="store_true", help="also write DIR/plot.png (needs pip install 'tdsl[plot]')")
    _add_flag_args(p, writes_flags=False)
    _add_limits(p)
    p.set_defaults(run=_cmd_tune)

    p = sub.add_parser("import", help="turn transform-dialect specs into an editable strategy set", description="Read tuning specs, preprocessing specs or codegen libraries (hand-written, IREE's own, tuners', or tdsl renders) with the MLIR bindings and write the StrategySet they express: one rule per matcher/action pair, sequence names kept. Several files are the scripts of one rendered set and are merged. Older IREE syntax is upgraded where the meaning is clear (each upgrade is noted); a construct tdsl cannot express is an error naming the op and its line, unless --allow-raw keeps it as verified raw MLIR.", **common)
    p.add_argument("specs", nargs="+", type=Path, metavar="SPEC.mlir", help="spec file(s)")
    p.add_argument("-o", "--output", type=Path, metavar="OUT.py|OUT.yaml|OUT.json", help="write the set here (by suffix); default: the Python module on stdout")
    p.add_argument("--target", help=f"target name for the imported rules (default: from the spec: {_target_names()})")
    p.add_argument("--allow-raw", action="store_true", help="keep matchers and actions tdsl cannot express as verified raw MLIR")
    p.add_argument("--kind", choices=("tuning_spec", "preprocessing", "codegen_library"), help="the injection point, when the entry point does not say")
    p.set_defaults(run=_cmd_import)

    p = sub.add_parser("show", help="print a strategy set as YAML or JSON", description="Load a strategy file and print its canonical YAML or JSON form (loads back to an equal set).", **common)
    p.add_argument("strategies", metavar="FILE[:NAME]", help="strategy file")
    p.add_argument("--format", choices=("yaml", "json"), default="yaml")
    p.set_defaults(run=_cmd_show)

    p = sub.add_parser("schema", help="print the JSON Schema of strategy files (.yaml / .json)", description="Print a JSON Schema (draft 2020-12) of the strategy file format: it accepts the spellings the loader accepts (m: 256, names: linalg.matmul, {one_of: [...]}) and checks kinds, fields, types and ranges; checks that need other fields or the target run when the file is loaded. For editors: '# yaml-language-server: $schema=strategy.schema.json'.", **common)
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the schema to FILE instead of stdout")
    p.set_defaults(run=_cmd_schema)
    return top


def _os_reason(err: OSError) -> str:
    reason = err.strerror or type(err).__name__
    return f"{reason.lower()}" + (f" ({err.filename})" if err.filename else "")


def _one_line(err: BaseException) -> str:
    if isinstance(err, StrategyError):
        return "invalid strategy: " + "; ".join(p.describe(err.strategy) for p in err.problems)
    if isinstance(err, RenderError):
        return _render_line(err)
    if isinstance(err, OSError):
        return _os_reason(err)
    return " ".join(str(err).split())


def _render_line(err: RenderError) -> str:
    """The head and first error of a script that does not verify; the whole report (the
    numbered script and every error) goes to a file the line names."""
    text = str(err)
    head = text.split("\n", 1)[0].rstrip(":")
    errors = [line.strip() for line in text.splitlines() if line.strip().startswith("error:")]
    line = head + (f": {errors[0]}" if errors else "")
    try:
        where = failure_dir("render")
        atomic_write(where / "render-error.txt", text + "\n")
        atomic_write(where / "script.mlir", err.script)
        line += f"; the script and every error are in {where}"
    except OSError:
        pass
    return " ".join(line.split())


def _fail(message: str, code: int) -> int:
    print(f"tdsl: error: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code (see the module docstring)."""
    try:
        try:
            args = parser().parse_args(argv)
        except SystemExit as done:  # --help, --version, or argparse's one-line error
            return done.code if isinstance(done.code, int) else (EXIT_OK if done.code is None else EXIT_BAD_INPUT)
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except KeyboardInterrupt:
        print("tdsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StrategyNotApplied as err:  # a verdict, like numbers past tolerance
        return _fail(_one_line(err), EXIT_VERDICT)
    except TdslError as err:
        return _fail(_one_line(err), EXIT_BAD_INPUT)
    except BrokenPipeError:  # the reader of stdout went away (tdsl show ... | head)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except OSError as err:
        return _fail(_one_line(err), EXIT_BAD_INPUT)
    except Exception as err:  # noqa: BLE001 - a bug: one line, not a traceback
        if os.environ.get("TDSL_TRACEBACK"):
            traceback.print_exc()
        detail = " ".join(str(err).split())
        return _fail(
            f"internal error: {type(err).__name__}" + (f": {detail}" if detail else "")
            + " (a bug in tdsl, not in the input; TDSL_TRACEBACK=1 prints the traceback)",
            EXIT_INTERNAL,
        )


if __name__ == "__main__":
    sys.exit(main())
