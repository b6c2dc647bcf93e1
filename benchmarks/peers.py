"""IREE's builds and tdsl's against what users run: onnxruntime and OpenVINO, per model of
the zoo (``benchmarks/zoo/``) or any ``.onnx`` file, at each thread count.

Needs ``tdsl[onnx]``; OpenVINO is timed where ``tdsl[peers]`` is installed. Usage (minutes
per model; the large builds compile for minutes):

    python benchmarks/peers.py [MODEL ...] [--threads 1,all] [--repetitions N]
        [--tuned NAME=FILE ...] [--markdown FILE] [--json FILE]

MODEL is a zoo name (default: all seven) or a path to an ``.onnx`` model. Each model is one
:func:`tdsl.measure.bench.bench` run: ``auto()`` is the strategy build, each ``--tuned`` set
a build of its own; onnxruntime, OpenVINO, IREE default and IREE data tiling run in the same
interleaved rounds at the same thread count. Per model and thread count it prints each
variant's median ms and its speed against onnxruntime and against the faster peer (the
median over rounds of that round's ratio; above 1: faster than the peer), then the machine
and the versions. A build that fails gets its cell with the failure's first line and the
run goes on; a model nothing runs on gets its row with the failure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Sequence

from tdsl.cli.arguments import compared_set, positive_float, positive_int, thread_counts
from tdsl.compiler.iree_compile import CompileFailed
from tdsl.errors import RenderError, StrategyError, TdslError
from tdsl.files import atomic_write
from tdsl.measure.bench import DATA_TILING, DEFAULT, ONNXRUNTIME, OPENVINO, STRATEGY, BenchReport, bench
from tdsl.measure.bench_report import BUILT_IN_VARIANTS
from tdsl.measure.machine import ISA_NAMES, machine, versions
from tdsl.measure.peers import PEERS, installed_peers, missing_peers_note
from tdsl.sets.loader import as_strategy_set
from tdsl.sets.strategy_set import StrategySet
from tdsl.strategies.cpu import auto

HERE = Path(__file__).resolve().parent
ZOO = HERE / "zoo"
AUTO = "auto()"
IREE_BUILDS = (DEFAULT, DATA_TILING)
LABELS = {ONNXRUNTIME: "onnxruntime", OPENVINO: "OpenVINO", DEFAULT: "IREE default", DATA_TILING: "IREE data tiling"}
"""Column headings of the markdown table; other columns are named by their variant."""
FAILURES = (TdslError, OSError)
"""What a model's run can fail with (bench's one-line errors, a vanished file)."""
BUILD_FAILURES = (CompileFailed, RenderError, StrategyError)
"""What a strategy build can fail with: the run is made again without it."""
NO_STRATEGY = StrategySet(name="iree_default", rules=())
"""The strategy build when ``auto()`` fails: no rules, so IREE's default path."""


def zoo_models() -> dict[str, Path]:
    """{name: model.onnx} of the committed zoo."""
    return {p.parent.name: p for p in sorted(ZOO.glob("*/model.onnx"))}


def model_path(text: str) -> Path:
    """A zoo name or an ``.onnx`` file (argparse type)."""
    zoo = zoo_models()
    if text in zoo:
        return zoo[text]
    path = Path(text)
    if path.suffix == ".onnx" and path.is_file():
        return path
    raise argparse.ArgumentTypeError(f"expected a zoo model ({', '.join(zoo)}) or an .onnx file, received {text!r}")


def tuned_set(text: str) -> tuple[str, StrategySet]:
    """``NAME=FILE[:SET]``: a strategy set, loaded now, timed as the column NAME (argparse type)."""
    name, file = compared_set(text)
    reserved = (AUTO, *BUILT_IN_VARIANTS)
    if name in reserved:
        raise argparse.ArgumentTypeError(f"NAME: expected a name other than {', '.join(reserved)}, received {name!r}")
    try:
        return name, as_strategy_set(file)
    except TdslError as err:
        raise argparse.ArgumentTypeError(f"{name}={file}: {first_line(err)}") from None


def output_file(text: str) -> Path:
    """A file to write, in a folder that exists (argparse type): checked before hours of timing."""
    path = Path(text)
    if path.is_dir() or not path.parent.is_dir():
        what = "a directory" if path.is_dir() else f"a file in {str(path.parent)!r}, which is no directory"
        raise argparse.ArgumentTypeError(f"expected a file path in an existing folder, received {what}")
    return path


def model_name(path: Path) -> str:
    return path.parent.name if path.name == "model.onnx" else path.stem


@dataclass
class Cell:
    """One variant of one model at one thread count: its samples (seconds), or why it has none."""

    samples: tuple[float, ...] = ()
    failure: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples) * 1e3 if self.samples else None


def speed_over(peer: Cell, cell: Cell) -> float | None:
    """``peer / cell``, the median of per-round ratios (ratio of medians when the sample
    counts differ); above 1: ``cell`` is faster. None when either has no samples."""
    if not peer.samples or not cell.samples:
        return None
    if len(peer.samples) != len(cell.samples):
        return statistics.median(peer.samples) / statistics.median(cell.samples)
    return statistics.median(p / c for p, c in zip(peer.samples, cell.samples))


@dataclass
class Result:
    """One model at one thread count: a cell per variant, in column order."""

    model: str
    threads: int
    cells: dict[str, Cell] = field(default_factory=dict)
    failure: str = ""
    notes: list[str] = field(default_factory=list)

    def faster_peer(self) -> str | None:
        """The peer with the lower median, of those that ran."""
        ran = [(c.median_ms, name) for name in PEERS if (c := self.cells.get(name)) and c.median_ms is not None]
        return min(ran)[1] if ran else None

    def speeds(self, variant: str) -> tuple[float | None, float | None]:
        """(against onnxruntime, against the faster peer) of ``variant``."""
        cell = self.cells[variant]
        ort = self.cells.get(ONNXRUNTIME)
        peer = self.faster_peer()
        return (
            speed_over(ort, cell) if ort else None,
            speed_over(self.cells[peer], cell) if peer else None,
        )


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


# ---------------------------------------------------------------------------------------
# Measuring.


@dataclass(frozen=True)
class Settings:
    threads: tuple[int, ...]
    repetitions: int
    min_time_s: float


def _bench(model: Path, builds: Sequence[tuple[str, StrategySet]], settings: Settings) -> BenchReport:
    """One bench run: the first build as the strategy (none: IREE's default path), the others
    beside it, the peers and IREE's two builds in the same rounds."""
    strategy = builds[0][1] if builds else NO_STRATEGY
    return bench(
        model,
        strategy,
        threads=settings.threads,
        repetitions=settings.repetitions,
        min_time_s=settings.min_time_s,
        numpy_baseline=False,
        peers=True,
        also={name: build for name, build in builds[1:]},
    )


def bench_builds(
    model: Path, builds: Sequence[tuple[str, StrategySet]], settings: Settings
) -> tuple[BenchReport, str | None, dict[str, str]]:
    """(report, the build timed as its strategy row, {build: first line of its failure}).

    When the run fails, the first build alone tells whose failure it was: if it runs, the
    others failed; if not, it is left out and the rest are run again. With no build left,
    IREE's default path is the strategy build. Only a build's failure (:data:`BUILD_FAILURES`)
    is retried; any other is the model's (raised)."""
    try:
        return _bench(model, builds, settings), builds[0][0] if builds else None, {}
    except BUILD_FAILURES as err:
        if not builds:
            raise
        failure = first_line(err)
    if len(builds) > 1:
        try:
            report = _bench(model, builds[:1], settings)
            return report, builds[0][0], {name: failure for name, _ in builds[1:]}
        except BUILD_FAILURES as err:
            failure = first_line(err)
    report, strategy, failures = bench_builds(model, builds[1:], settings)
    return report, strategy, {builds[0][0]: failure, **failures}


def measure(
    model: Path, columns: Sequence[str], tuned: Sequence[tuple[str, StrategySet]], settings: Settings
) -> list[Result]:
    """A result per thread count of ``model`` with a cell per column (the peers, IREE's
    builds, ``auto()``, the tuned sets), or the failure that kept the model from running."""
    name = model_name(model)
    builds: list[tuple[str, StrategySet]] = [(AUTO, auto()), *tuned]
    try:
        report, strategy, failures = bench_builds(model, builds, settings)
    except FAILURES as err:
        return [Result(name, t, failure=first_line(err)) for t in settings.threads]
    function = report.rows[0].function
    results = []
    for t in settings.threads:
        result = Result(name, t, notes=list(report.notes))
        for variant in columns:
            row = report.row(function, t, STRATEGY if variant == strategy else variant)
            if row is not None:
                result.cells[variant] = Cell(row.samples)
            elif variant in failures:
                result.cells[variant] = Cell(failure=failures[variant])
            else:  # an IREE build that did not compile has a note naming it
                label = LABELS.get(variant, variant)
                result.cells[variant] = Cell(failure=next((n for n in report.notes if n.startswith(label)), "no row"))
        results.append(result)
    return results


# ---------------------------------------------------------------------------------------
# Reporting.


def machine_line(threads: Sequence[int], repetitions: int) -> str:
    found = machine()
    isa = ISA_NAMES.get(found["isa"], found["isa"])
    return (
        f"Machine: {found['cpu']}, {found['cores']} cores; ISA: {isa}. Threads {', '.join(map(str, threads))}; "
        f"medians of {repetitions} interleaved rounds"
    )


def versions_line() -> str:
    found = versions()

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    return (
        f"IREE {found['iree-base-compiler']} (runtime {found['iree-base-runtime']}), tdsl {found['tdsl']}, "
        f"onnxruntime {of('onnxruntime')}, OpenVINO {of('openvino')}"
    )


def _speed(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def text_rows(result: Result) -> list[str]:
    """The printed block of one model at one thread count: a line per variant."""
    head = f"{result.model:<16} {result.threads:>3}"
    if result.failure:
        return [f"{head}  failed: {result.failure}"]
    lines = []
    for variant, cell in result.cells.items():
        if cell.median_ms is None:
            lines.append(f"{head}  {variant:<18} failed: {cell.failure}")
            continue
        ort, peer = result.speeds(variant)
        lines.append(f"{head}  {variant:<18} {cell.median_ms:10.3f} {_speed(ort):>14} {_speed(peer):>14}")
    return lines


TEXT_HEADER = f"{'model':<16} {'thr':>3}  {'variant':<18} {'median ms':>10} {'x onnxruntime':>14} {'x faster peer':>14}"


def _markdown_cell(result: Result, variant: str, footnotes: dict[str, int]) -> str:
    cell = result.cells.get(variant)
    if cell is None or cell.median_ms is None:
        if cell is None:
            return "not run"
        number = footnotes.setdefault(cell.failure, len(footnotes) + 1)
        return f"failed [{number}]"
    if variant in PEERS:
        return f"{cell.median_ms:.3f} ms"
    ort, peer = result.speeds(variant)
    return f"{cell.median_ms:.3f} ms ({_speed(ort)}, {_speed(peer)})"


def markdown(results: Sequence[Result], columns: Sequence[str], threads: Sequence[int], repetitions: int) -> str:
    """A table a docs page can include as-is: a row per model and thread count, the machine
    and ISA in the caption above it."""
    lines = [
        f"### Peers on {machine()['cpu']}, {ISA_NAMES.get(machine()['isa'], machine()['isa'])}",
        "",
        f"{machine_line(threads, repetitions)}. {versions_line()}. Per build: median ms per call "
        "(speed against onnxruntime, against the faster peer; above 1 is faster).",
        "",
        "| model | threads | " + " | ".join(LABELS.get(c, c) for c in columns) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in columns) + " |",
    ]
    footnotes: dict[str, int] = {}
    for r in results:
        if r.failure:
            cells = [f"failed [{footnotes.setdefault(r.failure, len(footnotes) + 1)}]"] * len(columns)
        else:
            cells = [_markdown_cell(r, c, footnotes) for c in columns]
        lines.append(f"| {r.model} | {r.threads} | " + " | ".join(cells) + " |")
    if footnotes:
        lines.append("")
        lines += [f"[{n}] {why.replace('|', '/')}" + "  " for why, n in footnotes.items()]
    return "\n".join(lines) + "\n"


def to_json(results: Sequence[Result], threads: Sequence[int], repetitions: int) -> dict[str, object]:
    rows = []
    for r in results:
        for variant, cell in r.cells.items():
            ort, peer = r.speeds(variant)
            rows.append(
                {
                    "model": r.model,
                    "threads": r.threads,
                    "variant": variant,
                    "median_ms": cell.median_ms,
                    "samples_ms": [s * 1e3 for s in cell.samples],
                    "speed_over_onnxruntime": ort,
                    "speed_over_faster_peer": peer,
                    "faster_peer": r.faster_peer(),
                    "failure": cell.failure or None,
                }
            )
        if r.failure:
            rows.append({"model": r.model, "threads": r.threads, "variant": None, "failure": r.failure})
    return {
        "machine": dict(machine()),
        "versions": versions_line(),
        "threads": list(threads),
        "repetitions": repetitions,
        "rows": rows,
        "notes": {r.model: r.notes for r in results if r.threads == threads[0]},
    }


# ---------------------------------------------------------------------------------------
# Command line.


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("models", nargs="*", type=model_path, help="zoo names or .onnx files (default: the whole zoo)")
    p.add_argument("--threads", type=thread_counts, default="1,all", help="1, all or a list (default: 1,all)")
    p.add_argument("--repetitions", type=positive_int, default=5, help="interleaved rounds per model (default: 5)")
    p.add_argument("--min-time", type=positive_float, default=0.2, help="seconds per sample (default: 0.2)")
    p.add_argument(
        "--tuned",
        type=tuned_set,
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a strategy set file (FILE:SET for one of several) timed as the column NAME; repeatable",
    )
    p.add_argument("--markdown", type=output_file, help="write the table for a docs page here")
    p.add_argument("--json", type=output_file, help="write every sample and ratio here")
    return p


def write_outputs(args: argparse.Namespace, results: Sequence[Result], columns: Sequence[str]) -> None:
    """The ``--markdown`` table and ``--json`` document of the results so far, each replaced whole."""
    if args.markdown:
        atomic_write(args.markdown, markdown(results, columns, args.threads, args.repetitions))
    if args.json:
        atomic_write(args.json, json.dumps(to_json(results, args.threads, args.repetitions), indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    models: list[Path] = args.models or list(zoo_models().values())
    tuned: list[tuple[str, StrategySet]] = args.tuned
    settings = Settings(args.threads, args.repetitions, args.min_time)
    found = installed_peers()
    columns = [*found, *IREE_BUILDS, AUTO, *(n for n, _ in tuned)]
    print(machine_line(args.threads, args.repetitions))
    print(versions_line())
    missing = missing_peers_note(found)
    if missing:
        print(missing)
    print(TEXT_HEADER, flush=True)
    results: list[Result] = []
    for model in models:
        for result in measure(model, columns, tuned, settings):
            results.append(result)
            print("\n".join(text_rows(result)), flush=True)
        try:  # after every model, so a long run interrupted keeps what it measured
            write_outputs(args, results, columns)
        except OSError as err:
            print(f"peers.py: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
            return 2
    print(machine_line(args.threads, args.repetitions))
    print(versions_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
