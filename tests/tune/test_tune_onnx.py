"""``tdsl tune`` on what torch.onnx.export writes (a file of its own: the slowest tuning of the
suite runs beside test_tune.py's, not after it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tdsl
from tdsl.programs.load import load_program
from tdsl.programs.parameters import externalize_weights
from tdsl.tune import LocalExecutor, TuneCache, TuneOptions, tune

pytestmark = pytest.mark.e2e

BERT = Path(__file__).resolve().parent.parent.parent / "examples" / "models" / "bert" / "model.onnx"


@pytest.mark.compile
def test_tune_a_real_onnx_export(tmp_path: Path) -> None:
    """What torch.onnx.export writes (examples/models/bert: si64 token ids, batch-1
    batch_matmuls, constant weights): the op listing finds its contractions, a batch-1
    batch_matmul gets the three op-level spaces (pinned tiles; packing and RHS panels, its
    unit batch folded)
    whose candidates compile (against the weights in a parameter archive, so each module is
    code only) and run, and the emitted set loads, renders and passes the numeric check on
    the model with its weights inline."""
    options = TuneOptions(budget=1, rounds=2, min_time_s=0.01, finalists=1, ops=("1x64x1024xf32, 1x1024x256",))
    with TuneCache(tmp_path / "cache.sqlite") as cache, LocalExecutor(2) as executor:
        result = tune(BERT, options=options, executor=executor, cache=cache)
    [job] = result.jobs
    assert job.dispatch is not None and job.dispatch.graph_op is not None
    assert job.dispatch.graph_op.name == "linalg.batch_matmul" and job.dispatch.graph_op.loop_sizes[0] == 1
    assert job.space is not None and job.space.size > 0
    assert job.variants and all(v.vmfb is not None for v in job.variants)  # candidates compile on the real model
    # Built with the weights in a parameter archive: the modules hold code only.
    [archive] = externalize_weights(load_program(BERT)).parameters
    assert archive.path.stat().st_size > 4e6 and all(len(v.vmfb or b"") < 1e6 for v in job.variants)
    assert (
        len(job.spaces) == 3
        and any(":packed#" in v.label for v in job.variants)
        and any(":panels#" in v.label for v in job.variants)
    )
    assert {"iree-default", "iree-data-tiling"} <= {v.label for v in result.final}
    assert all(v.median and not v.sample_errors for v in result.final), [
        (v.label, v.sample_errors) for v in result.final
    ]
    tdsl.render(result.tuned, "cpu")
    if result.tuned.rules:
        assert result.numerics["ok"]
