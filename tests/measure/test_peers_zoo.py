"""The peer-comparison zoo (benchmarks/zoo/) and ``benchmarks/peers.py`` without compiling:
every zoo model loads with the inputs and outputs its README names, onnxruntime runs the
smallest, and the script parses its arguments, attributes a failed build to its column and
writes a table the docs accept."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import numpy as np
import pytest
from tdsl.compiler.iree_compile import CompileFailed
from tdsl.programs.inputs import make_inputs
from tdsl.programs.load import load_program
from tdsl.programs.reference import onnxruntime_reference
from tdsl.programs.signatures import signatures

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "benchmarks" / "zoo"
SCRIPT = ROOT / "benchmarks" / "peers.py"
SMALLEST = "whisper_encoder"

Tensor = tuple[str, tuple[int, ...], str]


def _tensors(cell: str) -> list[Tensor]:
    """``"`a`, `b`: 1x128 si64"`` -> [("a", (1, 128), "si64"), ("b", ...)]; several groups
    (``"`x` 1x10 f32, `y` 1x20 f32"``) each carry their own shape and type."""
    found: list[Tensor] = []
    for names, shape, element in re.findall(r"((?:`\w+`[,:]?\s*)+)(\d+(?:x\d+)*) (\w+)", cell):
        dims = tuple(int(d) for d in shape.split("x"))
        found += [(name, dims, element) for name in re.findall(r"`(\w+)`", names)]
    return found


def _readme_table() -> dict[str, tuple[list[Tensor], list[Tensor]]]:
    """{model: (inputs, outputs)} from the README's table."""
    table: dict[str, tuple[list[Tensor], list[Tensor]]] = {}
    for line in (ZOO / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"`\w+/`", cells[0]):
            table[cells[0].strip("`/")] = (_tensors(cells[3]), _tensors(cells[4]))
    return table


README = _readme_table()


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Imports go to a cache of this module's own (not the user's ~/.cache/tdsl)."""
    pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TDSL_CACHE_DIR", str(tmp_path_factory.mktemp("tdsl-cache")))
        yield


def test_the_readme_describes_every_zoo_model_and_each_is_weightless() -> None:
    models = sorted(p.parent.name for p in ZOO.glob("*/model.onnx"))
    assert sorted(README) == models and len(models) == 7
    for name in models:
        assert (ZOO / name / "model.onnx").stat().st_size < 1 << 20, name
        inputs, outputs = README[name]
        assert inputs and outputs, f"README: no inputs or outputs read for {name}"


ONNX_ELEMENTS = {1: "f32", 7: "si64"}
LARGE = {"gpt2", "minilm_l6"}
"""Models whose refilled embedding tables (47-154 MB) make an import take many seconds."""


@pytest.mark.parametrize("name", sorted(README))
def test_each_zoo_graph_declares_the_inputs_and_outputs_the_readme_names(name: str) -> None:
    onnx = pytest.importorskip("onnx", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    graph = onnx.load(str(ZOO / name / "model.onnx")).graph

    def declared(values: Any) -> list[Tensor]:
        return [
            (
                v.name,
                tuple(d.dim_value for d in v.type.tensor_type.shape.dim),
                ONNX_ELEMENTS.get(v.type.tensor_type.elem_type, "?"),
            )
            for v in values
        ]

    assert (declared(graph.input), declared(graph.output)) == README[name]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in LARGE else n for n in sorted(README)])
def test_each_zoo_model_loads_with_the_inputs_and_outputs_the_readme_names(name: str, cache: None) -> None:
    program = load_program(ZOO / name / "model.onnx")
    [sig] = signatures(program)
    inputs, outputs = README[name]
    assert [(a.name, a.shape, a.element) for a in sig.inputs] == inputs
    assert [(tuple(r.shape or ()), r.element) for r in sig.results] == [(s, e) for _, s, e in outputs]


def test_onnxruntime_runs_the_smallest_zoo_model(cache: None) -> None:
    pytest.importorskip("onnxruntime", reason="needs the onnx extra: pip install 'tdsl[onnx]'")
    program = load_program(ZOO / SMALLEST / "model.onnx")
    assert program.onnx_path is not None
    [sig] = signatures(program)
    [out] = onnxruntime_reference(program.onnx_path, make_inputs(sig, seed=1))
    assert out.shape == README[SMALLEST][1][0][1] and np.isfinite(out).all()


# --------------------------------------------------------------------------------------
# benchmarks/peers.py


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmarks_peers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_script_prints_its_usage() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for option in ("--threads", "--repetitions", "--tuned", "--markdown", "--json"):
        assert option in proc.stdout


@pytest.mark.parametrize(
    "argv, message",
    [
        (["no_such_model"], "expected a zoo model (convnext, gpt2"),
        (["--tuned", "auto()=x.py"], "NAME: expected a name other than auto()"),
        (["--tuned", "mine=no_such_file.py"], "mine=no_such_file.py: strategy file"),
        (["--threads", "0"], "expected 1, all, or a comma-separated list"),
        (["--json", "no_such_folder/peers.json"], "which is no directory"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    peers: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        peers.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]


def test_a_failed_build_gets_its_cell_and_the_others_are_timed(
    peers: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tuned set that does not compile: the first run fails, ``auto()`` alone runs, and the
    tuned column holds the failure's first line; a failing ``auto()`` leaves the tuned set
    as the strategy build."""
    calls: list[list[str]] = []

    def fake_bench(model: Path, strategy: Any, **kwargs: Any) -> str:
        names = [strategy.name, *kwargs["also"]]
        calls.append(names)
        if "broken" in names or "broken_set" in names:
            raise CompileFailed("iree-compile failed: a vector too large\nsecond line")
        return "report"

    monkeypatch.setattr(peers, "bench", fake_bench)
    settings = peers.Settings((1,), 1, 0.1)
    good, bad = peers.StrategySet(name="good", rules=()), peers.StrategySet(name="broken_set", rules=())
    report, strategy, failures = peers.bench_builds(Path("m.onnx"), [("auto()", good), ("broken", bad)], settings)
    assert (report, strategy) == ("report", "auto()")
    assert failures == {"broken": "iree-compile failed: a vector too large"}
    assert calls == [["good", "broken"], ["good"]]
    calls.clear()
    report, strategy, failures = peers.bench_builds(Path("m.onnx"), [("auto()", bad), ("tuned", good)], settings)
    assert (strategy, failures) == ("tuned", {"auto()": "iree-compile failed: a vector too large"})
    assert calls == [["broken_set", "tuned"], ["broken_set"], ["good"]]


def test_the_markdown_table_is_a_docs_table_with_a_row_per_model_and_thread_count(peers: ModuleType) -> None:
    ort, dt, auto = peers.Cell((0.010, 0.012)), peers.Cell((0.020, 0.024)), peers.Cell((0.005, 0.006))
    ok = peers.Result("minilm_l6", 1, {"onnxruntime": ort, "iree-data-tiling": dt, "auto()": auto})
    failed = peers.Result("minilm_l6", 2, failure="onnxruntime cannot load it")
    text = peers.markdown([ok, failed], ["onnxruntime", "iree-data-tiling", "auto()"], (1, 2), 2)
    lines = text.splitlines()
    caption = next(line for line in lines if line.startswith("Machine:"))
    assert "ISA:" in caption and lines[lines.index(caption) + 2].startswith("| model | threads | onnxruntime |")
    rows = [line for line in lines if line.startswith("| minilm_l6 |")]
    assert rows[0] == "| minilm_l6 | 1 | 11.000 ms | 22.000 ms (0.50x, 0.50x) | 5.500 ms (2.00x, 2.00x) |"
    assert rows[1] == "| minilm_l6 | 2 | failed [1] | failed [1] | failed [1] |"
    assert lines[-1] == "[1] onnxruntime cannot load it  "  # each reason once, below the table
