"""Rendering + verification throughput: 1,000 distinct strategies, rendered and verified.

Each strategy is a one-rule StrategySet (a different tile/pack configuration per
iteration, cycling through the three injection points), rendered with ``tdsl.render``
(jinja2 + parse + verify with the MLIR bindings). Prints the median of 5 rounds and the
per-strategy cost. Target: under 2 s for 1,000 strategies.

    python benchmarks/render_bench.py [--count 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from tdsl import (
    Codegen,
    ContractionMatch,
    CpuLowering,
    CpuTarget,
    DataLayout,
    Fuse,
    PackGreedily,
    Rule,
    StrategySet,
    TileUsingFor,
    TileUsingForall,
    render,
)


def strategies(count: int) -> list[StrategySet]:
    sets = []
    for i in range(count):
        m, n, k = 8 * (1 + i % 4), 16 * (1 + i % 3), 1 + i % 8
        match = ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=64 * (1 + i % 16))
        if i % 3 == 0:
            strategy = DataLayout(name=f"pack_{i}", pack=PackGreedily(matmul_packed_sizes=[m, n, k]))
        elif i % 3 == 1:
            strategy = CpuLowering(
                name=f"tiles_{i}",
                distribution=[64, 64, 0],
                vector_common_parallel=[m, n, 0],
                vector_reduction=[0, 0, k],
            )
        else:
            strategy = Codegen(
                name=f"td_{i}",
                root="linalg.matmul",
                tiling=[
                    TileUsingForall(tile_sizes=[32 + m, 64], mapping=["block_y", "block_x"]),
                    TileUsingFor(tile_sizes=[m, n, 0]),
                    TileUsingFor(tile_sizes=[0, 0, k]),
                ],
                fusion=[Fuse(producers=["linalg.fill"], into=[0])],
            )
        sets.append(
            StrategySet(
                name=f"bench_{i}", targets=[CpuTarget()], rules=[Rule(target="cpu", match=match, strategy=strategy)]
            )
        )
    return sets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sets = strategies(args.count)
    render(sets[0], "cpu")  # warm: context creation and template compilation
    times = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        lines = 0
        for s in sets:
            lines += sum(script.text.count("\n") for script in render(s, "cpu").scripts)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"rendered + verified {args.count} strategies ({lines} script lines) per round")
    print(
        f"rounds: {', '.join(f'{t:.3f}' for t in times)} s; median {median:.3f} s "
        f"= {1000 * median / args.count:.3f} ms per strategy"
    )
    verdict = "meets" if median < 2.0 * args.count / 1000 else "MISSES"
    print(f"target: < 2 s per 1,000 strategies -> {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
