"""The ONNX backend node tests through tdsl's commands: which ones IREE default compiles, and
what ``tdsl ops``, ``tdsl compile --strategies auto()`` and ``tdsl run`` (with and without
``--strategies auto()``) do on those.

Needs ``tdsl[onnx]`` and the node test data: onnx 1.22.0's wheel ships it
(``onnx/backend/test/data/node/<test>/model.onnx`` + ``test_data_set_0/*.pb``; 1.23 no longer
does). Usage (seconds per test, per job):

    python benchmarks/node_tests.py onnx-1.22.0-*.whl 'attention*' 'einsum*' --jobs 2
    python benchmarks/node_tests.py DIR_OF_NODE_TESTS --timeout 120 --json results.json

Each test is first compiled with IREE's default pipeline (``tdsl compile MODEL --target
cpu``); only where that compiles do the other four commands run. ``run`` gets the test's own
inputs (``--inputs``, one .npz of its ``input_*.pb``) and compares with onnxruntime (tdsl
does not read the test's expected outputs). Prints per command how many tests exited 0 (ok),
1 (numbers past tolerance), 2 (bad input or compiler failure, one line), 3 (tdsl's own bug)
or timed out, with a traceback counted apart, then every failure with its first line.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

NODE_DATA = "onnx/backend/test/data/node/"
BASELINE = "iree-default"
COMMANDS = (BASELINE, "ops", "compile auto()", "run auto()", "run")
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Outcome:
    """One command on one test: its exit code ("timeout" past the limit), whether it printed
    a traceback, and its first telling line."""

    code: int | str
    traceback: bool
    line: str


@dataclass
class TestResult:
    test: str
    inputs: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def node_tests(source: Path, patterns: list[str], into: Path) -> list[Path]:
    """The test directories under ``source`` (a folder of node tests, or an onnx wheel whose
    node data is extracted into ``into``) whose names match one of ``patterns``."""

    def wanted(name: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name, "test_" + p) for p in patterns)

    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            members = [
                m for m in wheel.namelist() if m.startswith(NODE_DATA) and wanted(m[len(NODE_DATA) :].split("/")[0])
            ]
            wheel.extractall(into, members)
        source = into / NODE_DATA
    return sorted(d for d in source.iterdir() if (d / "model.onnx").is_file() and wanted(d.name))


def inputs_npz(test: Path, out: Path) -> Path | None:
    """The test's ``test_data_set_0/input_*.pb`` as one .npz named by the model's graph
    inputs, or None where it has none or they are not plain tensors (sequences, optionals)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(test / "model.onnx"), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    files = sorted((test / "test_data_set_0").glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    if not names or len(files) != len(names):
        return None
    arrays = {}
    for name, file in zip(names, files):
        tensor = onnx.TensorProto()
        try:
            tensor.ParseFromString(file.read_bytes())
            arrays[name] = numpy_helper.to_array(tensor)
        except Exception:  # a SequenceProto or OptionalProto: tdsl's seeded inputs instead
            return None
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out


def first_line(code: int | str, text: str) -> str:
    """What a failing command said: its ``tdsl: error:`` line, a verdict line, or its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for marker in ("tdsl: error:", "Error", "past tolerance", "FAIL", "differ"):
        for line in lines:
            if marker in line:
                return line[:300]
    return (lines[-1] if lines else f"exit {code}, no output")[:300]


def tdsl(args: list[str], timeout: float) -> Outcome:
    command = [sys.executable, "-m", "tdsl.cli", "-q", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Outcome("timeout", False, f"no exit within {timeout:g} s")
    text = done.stderr + "\n" + done.stdout
    line = "" if done.returncode == 0 else first_line(done.returncode, text)
    return Outcome(done.returncode, TRACEBACK in text, line)


def run_test(test: Path, strategies: str, timeout: float, work: Path) -> TestResult:
    """IREE default first; the four commands only where it compiles."""
    here = work / test.name
    here.mkdir(parents=True, exist_ok=True)
    model = str(test / "model.onnx")
    npz = inputs_npz(test, here / "inputs.npz")
    given = ["--inputs", str(npz)] if npz else []
    result = TestResult(test.name, "the test's" if npz else "seeded")
    compile_timeout = ["--timeout", str(max(1, int(timeout) - 10))]
    result.outcomes[BASELINE] = tdsl(["compile", model, "--target", "cpu", *compile_timeout], timeout)
    if result.outcomes[BASELINE].code != 0:
        return result
    auto = ["--strategies", strategies]
    result.outcomes["ops"] = tdsl(["ops", model, "--target", "cpu", *compile_timeout], timeout)
    result.outcomes["compile auto()"] = tdsl(["compile", model, *auto, "--target", "cpu", *compile_timeout], timeout)
    result.outcomes["run auto()"] = tdsl(["run", model, *auto, *given, *compile_timeout], timeout)
    result.outcomes["run"] = tdsl(["run", model, *given, *compile_timeout], timeout)
    return result


def table(results: list[TestResult]) -> str:
    columns = ["0", "1", "2", "3", "timeout", "other", "traceback"]
    rows = [f"{'command':<16}" + "".join(f"{c:>10}" for c in ["tests", *columns])]
    for command in COMMANDS:
        outcomes = [r.outcomes[command] for r in results if command in r.outcomes]
        counts = Counter(str(o.code) if str(o.code) in columns else "other" for o in outcomes)
        counts["traceback"] = sum(o.traceback for o in outcomes)
        rows.append(f"{command:<16}" + "".join(f"{n:>10}" for n in [len(outcomes), *(counts[c] for c in columns)]))
    return "\n".join(rows)


def failures(results: list[TestResult]) -> list[str]:
    """One line per non-zero command past IREE default (which only sorts the tests)."""
    lines = []
    for r in results:
        for command, o in r.outcomes.items():
            if command != BASELINE and (o.code != 0 or o.traceback):
                tb = " [traceback]" if o.traceback else ""
                lines.append(f"{r.test}  {command}: exit {o.code}{tb}: {o.line}")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("source", type=Path, help="a folder of node tests (<test>/model.onnx) or an onnx 1.22 wheel")
    p.add_argument("patterns", nargs="*", default=["*"], help="test name globs ('attention*'; 'test_' optional)")
    p.add_argument("--exclude", action="append", default=[], help="test name glob to leave out (repeatable)")
    p.add_argument("--jobs", type=int, default=1, help="tests in parallel (worker processes; default 1)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per command (default 300)")
    p.add_argument("--strategies", default="auto()", help="the strategies for 'auto()' (default: the ready set auto())")
    p.add_argument("--json", type=Path, help="write every outcome to this file")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tdsl-node-tests-") as tmp:
        work = Path(tmp)
        tests = node_tests(args.source, args.patterns, work / "data")
        tests = [t for t in tests if not any(fnmatch.fnmatch(t.name, x) for x in args.exclude)]
        os.environ.setdefault("TDSL_CACHE_DIR", str(work / "cache"))
        print(f"{len(tests)} node tests, {args.jobs} jobs, {args.timeout:g} s per command", flush=True)
        results = []
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_test, t, args.strategies, args.timeout, work / "runs") for t in tests]
            for future in concurrent.futures.as_completed(futures):
                r = future.result()
                codes = " ".join(f"{c}={o.code}" for c, o in r.outcomes.items())
                print(f"  {r.test}: {codes}", flush=True)
                results.append(r)
    results.sort(key=lambda r: r.test)
    print("\n" + table(results))
    print("\nfailures (first line):")
    print("\n".join(failures(results)) or "  none")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
