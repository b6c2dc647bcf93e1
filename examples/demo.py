"""The tdsl demo: render every example's strategies, compile its payload for llvm-cpu and
gfx942 with them, run the CPU build and check its numbers.

Run with ``make demo`` (which sets everything up) or ``python examples/demo.py``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tdsl import compile, load, render, run

EXAMPLES = Path(__file__).resolve().parent


def strategy_file(example: Path) -> Path:
    for name in ("strategy.py", "strategy.yaml", "strategy.json"):
        if (example / name).is_file():
            return example / name
    raise FileNotFoundError(f"{example} has no strategy.py/.yaml/.json")


def main() -> int:
    failures = 0
    examples = sorted(p for p in EXAMPLES.iterdir() if (p / "payload.mlir").is_file())
    with tempfile.TemporaryDirectory(prefix="tdsl-demo-") as tmp:
        for example in examples:
            strategies = load(strategy_file(example))
            print(f"== {example.name}: strategy set {strategies.name!r}")
            targets = [t.name for t in strategies.targets if strategies.rules_for(t.name)]
            for target in targets:
                rendered = render(strategies, target)
                out = Path(tmp) / example.name / target
                rendered.write(out)
                scripts = ", ".join(s.filename for s in rendered.scripts)
                report = compile(example / "payload.mlir", strategies, target, out / "module.vmfb")
                print(f"  {target}: rendered {scripts}; compiled in {report.result.wall_s:.2f} s")
                for rule in report.rules:
                    print(f"    rule {rule.index} {rule.strategy} ({rule.injection}): {rule.where()}")
                applied = sum(rule.applied for rule in report.rules)
                # A library set (e.g. cpu_auto) has rules for more op kinds than one payload holds.
                print(f"    {applied} of {len(report.rules)} rules applied")
                failures += applied == 0
            if "cpu" not in targets:
                continue
            result = run(example / "payload.mlir", strategies, "cpu", check=False)
            for function in result.functions:
                for c in function.comparisons:
                    verdict = "ok" if c.ok else "FAIL"
                    print(
                        f"  cpu run {function.function}: vs {c.reference} max abs err {c.max_abs:.2e}, "
                        f"max rel err {c.max_rel:.2e} -> {verdict}"
                    )
                    failures += not c.ok
    print(
        "demo: every example compiled with its strategies applied, and all CPU numbers match"
        if not failures
        else f"demo: {failures} problems"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
