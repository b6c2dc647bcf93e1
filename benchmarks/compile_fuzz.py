"""Compile fuzz: compile accepted generated strategies against the example payloads and
payloads of the forms real models have.

Draws strategy sets from ``tests/strategy_gen.py`` whose rules select one op of a payload
(``PAYLOAD_OPS``) exactly (its loops, sizes and element types: ``targeted_sets``), keeps the ones
``tdsl.StrategySet`` accepts, and compiles each with ``tdsl.compile(payload, set, target)``
for llvm-cpu and gfx942 (gfx942 is compile-only: no GPU is needed). Counts:

* compiled;
* failed with an error mapped to a strategy field (a ``loc("<strategy>.<field>")``);
* failed unmapped (the error points into the payload or IREE's own IR);
* iree-compile crashes (a signal or a stack dump) and memory-cap kills;
* hangs (the ``--timeout``);
* other exceptions from tdsl;
* skipped: IREE default itself fails on the payload for that target (checked once each).

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
I8 = ("i8", "i8", "i32")
MNK = ("m", "n", "k")
BMNK = ("b", "m", "n", "k")


# Payloads (paths from the repository root) and the ops rules may select in them: the
# examples, and the forms real models have (tests/payloads/fuzz/ and tests/payloads/cpu/:
# i1 and i8 masks selecting -inf into a softmax, f64, quantized 2-D and 3-D matmuls, an
# exported attention's head split with batch-1 projections and named transposes, a batch-1
# batch_matmul, a convolution whose unit batch IREE drops).
PAYLOAD_OPS: dict[str, list[gen.Op]] = {
    "examples/matmul_pack/payload.mlir": [gen.Op("matmul", MNK, (256, 384, 512), F32, "linalg.matmul", "mk_kn")],
    "examples/matmul_codegen/payload.mlir": [gen.Op("matmul", MNK, (256, 256, 256), F32, "linalg.matmul", "mk_kn")],
    "examples/matmul_td_mfma/payload.mlir": [gen.Op("matmul", MNK, (256, 256, 256), F16, "linalg.matmul", "mk_kn")],
    # Matmuls whose dispatches also hold their bias / activation consumers: no Codegen
    # rules (a Codegen strategy tiles only its root, so the consumer stays whole and its
    # buffer outgrows the stack: "exceeded stack allocation limit").
    "examples/mlp/payload.mlir": [
        gen.Op("matmul", MNK, (128, 512, 256), F32, "linalg.matmul", "mk_kn", epilogue=True),
        gen.Op("matmul", MNK, (128, 128, 512), F32, "linalg.matmul", "mk_kn", epilogue=True),
    ],
    "examples/bert_heads/payload.mlir": [
        gen.Op("matmul", MNK, (128, 768, 768), F32, "linalg.matmul", "mk_kn", epilogue=True)
    ],
    "examples/batch_matmul_tuning/payload.mlir": [
        gen.Op("batch_matmul", BMNK, (4, 128, 192, 256), F32, "linalg.batch_matmul", "mk_kn")
    ],
    "examples/conv_tuning/payload.mlir": [gen.conv_op((2, 32, 32, 64, 3, 3, 32), F32)],
    "tests/payloads/fuzz/masked_attention.mlir": [
        gen.Op("matmul", MNK, (64, 64, 32), F32, "linalg.matmul", "mk_kn", epilogue=True),
        gen.Op("matmul", MNK, (64, 32, 64), F32, "linalg.matmul", "mk_kn"),
        gen.Op("generic", None, (None, None), ("f32", "i1", "f32"), "linalg.generic"),
    ],
    "tests/payloads/fuzz/masked_scores_i8.mlir": [
        gen.Op("batch_matmul", BMNK, (2, 32, 32, 16), F32, "linalg.batch_matmul", "mk_kn", epilogue=True),
        gen.Op("generic", None, (None, None, None), ("f32", "i8", "f32"), "linalg.generic"),
    ],
    # tdsl keeps an f64 program f64 (--iree-input-demote-f64-to-f32=false): codegen sees f64
    "tests/payloads/fuzz/f64_linear.mlir": [
        gen.Op("matmul", MNK, (32, 64, 48), ("f64", "f64", "f64"), "linalg.matmul", "mk_kn", epilogue=True)
    ],
    "tests/payloads/fuzz/quantized_3d.mlir": [
        gen.quantized_op(32, 48, 64),
        gen.Op("batch_matmul", BMNK, (2, 32, 48, 64), I8, "linalg.batch_matmul", "mk_kn"),
    ],
    "tests/payloads/fuzz/unit_batch_conv.mlir": [gen.conv_op((1, 16, 16, 32, 3, 3, 16), F32, epilogue=True)],
    "tests/payloads/cpu/exported_heads.mlir": [
        gen.Op("batch_matmul", BMNK, (1, 32, 64, 64), F32, "linalg.batch_matmul", "mk_kn", epilogue=True),
        gen.Op("batch_matmul", BMNK, (2, 32, 32, 32), F32, "linalg.batch_matmul", "mk_kn", epilogue=True),
        gen.Op("matmul", MNK, (32, 64, 64), F32, "linalg.matmul", "mk_kn", epilogue=True),
        gen.Op("transpose", None, (None,) * 4, F32, "linalg.transpose"),
    ],
    "tests/payloads/cpu/batch1_matmul.mlir": [
        gen.Op("batch_matmul", BMNK, (1, 128, 384, 256), F32, "linalg.batch_matmul", "mk_kn")
    ],
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
    "skipped": "skipped: IREE default fails on the payload",
}
PROBLEMS = ("unmapped", "crash", "memory", "timeout", "other")


def sample(count: int, seed_value: int) -> list[tuple[str, str, gen.Data]]:
    """``count`` accepted (payload, target, set) triples, spread over payloads and targets:
    at most an even share per (payload, target) while other pairs still take sets."""
    cases = [(name, target, op) for name, ops in PAYLOAD_OPS.items() for op in ops for target in TARGETS]
    picked: list[tuple[str, str, gen.Data]] = []
    seen: set[str] = set()
    share = -(-count // (len(PAYLOAD_OPS) * len(TARGETS)))
    per_pair: collections.Counter[tuple[str, str]] = collections.Counter()
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
        if len(picked) >= count or _key(triple) in seen or per_pair[triple[0], triple[1]] >= share:
            return
        seen.add(_key(triple))
        try:
            tdsl.StrategySet.model_validate(triple[2])
        except tdsl.StrategyError:
            return
        picked.append(triple)
        per_pair[triple[0], triple[1]] += 1

    while len(picked) < count:
        before = len(picked)
        draw()
        if len(picked) == before:
            break
        share *= 2  # pairs whose sets are mostly refused leave their share to the others
    return picked


def _key(triple: tuple[str, str, gen.Data]) -> str:
    return json.dumps(triple, sort_keys=True)


def default_compiles(payload: Path, target: str, timeout: float) -> bool:
    """IREE default compiles ``payload`` for ``target`` (else no strategy failure there is
    the strategy's)."""
    try:
        tdsl.compile(payload, None, target, timeout_s=timeout)
    except CompileFailed as err:
        print(f"IREE default fails on {payload.relative_to(ROOT)} for {target}: {str(err).splitlines()[0][:300]}")
        return False
    return True


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
    baselines: dict[tuple[str, str], bool] = {}
    for i, (name, target, data) in enumerate(triples):
        payload = ROOT / name
        if (name, target) not in baselines:
            baselines[name, target] = default_compiles(payload, target, args.timeout)
        kind, detail = classify(payload, data, target, args.timeout) if baselines[name, target] else ("skipped", "")
        counts[kind] += 1
        if kind in PROBLEMS or kind == "mapped":
            print(
                f"[{i}] {kind}: {name} {target}: {detail[:400]} | {json.dumps(data, separators=(',', ':'))}", flush=True
            )
    print(f"{len(triples)} strategies (seed {args.seed}) in {time.perf_counter() - start:.0f} s")
    spread = collections.Counter(f"{Path(name).parent.name}/{Path(name).name} {target}" for name, target, _ in triples)
    print("  per payload and target: " + ", ".join(f"{key} {n}" for key, n in sorted(spread.items())))
    for kind, label in CLASSES.items():
        print(f"  {label:<42} {counts[kind]}")
    return 1 if any(counts[k] for k in PROBLEMS) else 0


if __name__ == "__main__":
    sys.exit(main())
