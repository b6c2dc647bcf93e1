"""Fuzz the strategy model: validate (and render) N generated strategy sets.

Runs the generators of ``tests/strategy_gen.py`` (valid and mutated sets as plain data)
through ``tdsl.StrategySet.model_validate`` and ``tdsl.render`` for every target with
rules, and counts each outcome:

* accepted, and every script verifies;
* accepted, but a script does not verify (``RenderError``)   -- a failure;
* rejected with a ``StrategyError``;
* rejected, but the message is not one line per problem or names a path the input
  lacks                                                          -- a failure;
* any other exception (its type and first message)               -- a failure;
* examples that took over 5 s                                    -- a failure.

Exits 1 if any failure class is non-zero. Reproducible: ``--seed`` fixes the examples.

    python benchmarks/fuzz_strategies.py                  # 10,000 examples
    python benchmarks/fuzz_strategies.py --examples 500 --seed 7
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import strategy_gen as gen  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

SLOW_S = 5.0
LABELS = {
    "verified": "accepted + verified",
    "verify_failure": "accepted + verify failure",
    "rejected": "rejected (StrategyError)",
    "bad_message": "rejected, bad message",
    "other": "other exceptions",
    "slow": f"examples over {SLOW_S:g} s",
}
FAILURES = ("verify_failure", "bad_message", "other", "slow")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="how many sets to generate (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--show", type=int, default=5, help="failures of each class to print in full (default 5)")
    args = parser.parse_args(argv)

    counts: collections.Counter[str] = collections.Counter()
    firsts: dict[str, dict[str, tuple[str, gen.Data]]] = collections.defaultdict(dict)

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(gen.any_sets())
    def run(data: gen.Data) -> None:
        outcome = gen.check(data)
        counts[outcome.kind] += 1
        if outcome.seconds > SLOW_S:
            counts["slow"] += 1
            firsts["slow"].setdefault(f"{outcome.seconds:.1f} s", (outcome.detail, data))
        if outcome.kind in FAILURES:
            key = outcome.detail.split(":")[0] if outcome.kind == "other" else outcome.detail[:120]
            firsts[outcome.kind].setdefault(key, (outcome.detail, data))

    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    total = sum(counts[k] for k in LABELS if k != "slow")
    print(f"{total} examples (seed {args.seed}) in {elapsed:.0f} s")
    for kind, label in LABELS.items():
        print(f"  {label:<28} {counts[kind]}")
    for kind in FAILURES:
        for _key, (detail, data) in list(firsts[kind].items())[: args.show]:
            print(f"{LABELS[kind]}: {detail}")
            print(f"    input: {data!r}"[:2000])
    return 1 if any(counts[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
