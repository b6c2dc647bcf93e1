"""What ``tdsl tune`` writes into its output directory, and the table it prints.

* ``tuned.py`` and ``tuned.yaml``: the emitted StrategySet (``tdsl render DIR/tuned.py``,
  ``tdsl bench MODEL DIR/tuned.py`` work on it), each rule commented with its measured
  speed-up, the noise, the baseline and the machine;
* ``report.json``: every variant (baselines, program-level points, candidates per op,
  the model pass) with its knob values, compile status, time samples and the numerics
  verdict, the space sizes and what was pruned and why;
* ``plot.png`` with ``plot=True`` (needs ``tdsl[plot]``): per op, every candidate's median
  against the base, log scale, with the spread of its samples.

The files are written together (:func:`tdsl.files.replace_files`): a failure leaves the
directory as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..files import replace_files
from ..measure.machine import json_header
from .emitted import Emitted
from .target_tuner import TuneOutcome

TUNED_PY = "tuned.py"
TUNED_YAML = "tuned.yaml"
REPORT_JSON = "report.json"
PLOT_PNG = "plot.png"


def table(result: TuneOutcome) -> str:
    """The text table ``tdsl tune`` prints for ``result``."""
    return result.table()


def write_outputs(result: TuneOutcome, directory: Path, with_plot: bool = False) -> list[Path]:
    """Writes the files of the module docstring into ``directory``; returns their paths (no
    plot where the tuning has nothing to plot: a gfx942 ranking)."""
    emitted = Emitted(result.tuned, tuple(result.comments()), (), source=result.command, notes=tuple(result.notes()))
    files: dict[str, str | bytes] = {
        TUNED_PY: emitted.python(),
        TUNED_YAML: emitted.yaml(),
        REPORT_JSON: json.dumps(json_header() | result.report(), indent=1) + "\n",
    }
    if with_plot:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="tdsl-plot-") as tmp:
            png = Path(tmp) / PLOT_PNG
            if result.plot(png):
                files[PLOT_PNG] = png.read_bytes()
    replace_files(directory, files, owned=(PLOT_PNG,))
    return [directory / name for name in files]
