"""The deployment comparison of a tuning: the emitted set's speed-up over IREE's paths and
the peer runtimes at each thread count, paired by round."""

from __future__ import annotations

import statistics

from hypothesis import given
from hypothesis import strategies as st
from tdsl.tune.peer_stage import Deployment, DeploymentRow

samples = st.lists(st.floats(1e-4, 1.0), min_size=1, max_size=6)


@given(ours=samples, theirs=samples, threads=st.integers(1, 64))
def test_the_speedup_is_paired_by_round_where_the_rounds_match(
    ours: list[float], theirs: list[float], threads: int
) -> None:
    deployment = Deployment(
        "tuned", [DeploymentRow(threads, "tuned", ours), DeploymentRow(threads, "onnxruntime", theirs)]
    )
    gain = deployment.speedup(threads, "onnxruntime")
    if len(ours) == len(theirs):
        assert gain == statistics.median(t / o for t, o in zip(theirs, ours))
    else:
        assert gain == statistics.median(theirs) / statistics.median(ours)
    [mine, peer] = deployment.to_json()
    assert mine["speedup_of_tuned"] is None and peer["speedup_of_tuned"] == gain
    assert peer["median_ms"] == statistics.median(theirs) * 1e3


def test_lines_name_every_count_and_a_failed_variant_says_why() -> None:
    deployment = Deployment(
        "tuned",
        [
            DeploymentRow(1, "tuned", [0.010, 0.012]),
            DeploymentRow(1, "iree-default", [0.020, 0.024]),
            DeploymentRow(2, "tuned", [0.006]),
            DeploymentRow(2, "openvino", [], error="the openvino timer failed (exit 1): boom"),
        ],
        notes=["openvino note"],
    )
    lines = deployment.lines()
    assert lines[0] == "  at 1 thread(s): tuned 11.000 ms, iree-default 22.000 ms (2.00x)"
    assert lines[1] == "  at 2 thread(s): tuned 6.000 ms, openvino failed (the openvino timer failed (exit 1): boom)"
    assert lines[-1] == "  note: openvino note"
    assert deployment.speedup(2, "openvino") is None
