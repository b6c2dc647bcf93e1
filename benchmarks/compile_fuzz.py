"""Compile fuzz: compile accepted generated strategies against the example payloads.

Draws strategy sets from ``tests/strategy_gen.py`` whose rules select one op of an example
payload exactly (its loops, sizes and element types: ``targeted_sets``), keeps the ones
``tdsl.StrategySet`` accepts, and compiles each with ``tdsl.compile(payload, set, target)``
for llvm-cpu and gfx942 (gfx942 is compile-only: no GPU is needed). Counts:

* compiled;
* failed with an error mapped to a strategy field (a ``loc("<strategy>.<field>")``);
* failed unmapped (the error points into the payload or IREE's own IR);
* iree-compile crashes (a signal or a stack dump) and memory-cap kills;
* hangs (the ``--timeout``);
* other exceptions from tdsl.

Every crash, unmapped failure, hang and other exception is printed on one line with its
strategy set. An accepted strategy that crashes or fails unmapped is a validation gap.

    nice python benchmarks/compile_fuzz.py                     # 100 strategies
    nice python benchmarks/compile_fuzz.py --count 20 --timeout 60 --seed 3
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import strategy_gen as gen  # noqa: E402
import tdsl  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tdsl.compiler.iree_compile import CompileFailed, failure_kind  # noqa: E402

F32 = ("f32", "f32", "f32")
F16 = ("f16", "f16", "f32")
MNK = ("m", "n", "k")

PAYLOAD_OPS: dict[str, list[gen.Op]] = {
    "matmul_pack": [gen.Op("matmul", MNK, (256, 384, 512), F32, "linalg.matmul", "mk_kn")],
    "matmul_codegen": [gen.Op("matmul", MNK, (256, 256, 256), F32, "linalg.matmul", "mk_kn")],
    "matmul_td_mfma": [gen.Op("matmul", MNK, (256, 256, 256), F16, "linalg.matmul", "mk_kn")],
    # Matmuls whose dispatches also hold their bias / activation consumers: no Codegen
    # rules (a Codegen strategy tiles only its root, so the consumer stays whole and its
    # buffer outgrows the stack: "exceeded stack allocation limit").
    "mlp": [
        gen.Op("matmul", MNK, (128, 512, 256), F32, "linalg.matmul", "mk_kn", epilogue=True),
        gen.Op("matmul", MNK, (128, 128, 512), F32, "linalg.matmul", "mk_kn", epilogue=True),
    ],
    "bert_heads": [gen.Op("matmul", MNK, (128, 768, 768), F32, "linalg.matmul", "mk_kn", epilogue=True)],
    "batch_matmul_tuning": [
        gen.Op("batch_matmul", ("b", "m", "n", "k"), (4, 128, 192, 256), F32, "linalg.batch_matmul", "mk_kn")
    ],
    "conv_tuning": [gen.Op("conv", gen.CONV_ROLES, (2, 32, 32, 64, 3, 3, 32), F32, "linalg.conv_2d_nhwc_hwcf")],
}
TARGETS = ("cpu", "gfx942")
CLASSES = {
    "compiled": "compiled",
    "mapped": "failed, error mapped to a strategy field",
    "unmapped": "failed, unmapped",
    "crash": "iree-compile crashes (signals)",
    "memory": "killed at the memory cap",
    "timeout": "hangs (timeout)",
    "other": "other exceptions",
}
PROBLEMS = ("unmapped", "crash", "memory", "timeout", "other")


def sample(count: int, seed_value: int) -> list[tuple[str, str, gen.Data]]:
    """``count`` accepted (payload, target, set) triples, spread over payloads and targets."""
    cases = [(name, target, op) for name, ops in PAYLOAD_OPS.items() for op in ops for target in TARGETS]
    picked: list[tuple[str, str, gen.Data]] = []
    seen: set[str] = set()
    drawn = st.sampled_from(cases).flatmap(lambda c: gen.targeted_sets(c[2], c[1]).map(lambda d: (c[0], c[1], d)))

    @seed(seed_value)
    @settings(
        max_examples=count * 20,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(drawn)
    def draw(triple: tuple[str, str, gen.Data]) -> None:
        if len(picked) >= count or _key(triple) in seen:
            return
        seen.add(_key(triple))
        try:
            tdsl.StrategySet.model_validate(triple[2])
        except tdsl.StrategyError:
            return
        picked.append(triple)

    draw()
    return picked


def _key(triple: tuple[str, str, gen.Data]) -> str:
    return json.dumps(triple, sort_keys=True)


def classify(payload: Path, data: gen.Data, target: str, timeout: float) -> tuple[str, str]:
    strategies = tdsl.StrategySet.model_validate(data)
    try:
        tdsl.compile(payload, strategies, target, timeout_s=timeout)
    except CompileFailed as err:
        if err.result is None:
            return "other", str(err).splitlines()[0]
        kind = failure_kind(err.result)
        first = str(err).splitlines()[0]
        if kind in ("timeout", "crash", "memory"):
            return kind, first
        if any(d.strategy_field for d in err.result.errors):
            return "mapped", first
        return "unmapped", first
    except Exception as err:  # noqa: BLE001 - counted and shown
        return "other", f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return "compiled", ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="strategies to compile (default 100)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per iree-compile (default 120)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    triples = sample(args.count, args.seed)
    counts: collections.Counter[str] = collections.Counter()
    for i, (name, target, data) in enumerate(triples):
        payload = ROOT / "examples" / name / "payload.mlir"
        kind, detail = classify(payload, data, target, args.timeout)
        counts[kind] += 1
        if kind in PROBLEMS or kind == "mapped":
            print(
                f"[{i}] {kind}: {name} {target}: {detail[:400]} | {json.dumps(data, separators=(',', ':'))}", flush=True
            )
    print(f"{len(triples)} strategies (seed {args.seed}) in {time.perf_counter() - start:.0f} s")
    for kind, label in CLASSES.items():
        print(f"  {label:<42} {counts[kind]}")
    return 1 if any(counts[k] for k in PROBLEMS) else 0


if __name__ == "__main__":
    sys.exit(main())
