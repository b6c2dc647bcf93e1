"""A StrategySet that covers a program, from its op listing (``tdsl ops --emit``), by what
the target's kind has in :mod:`tdsl.strategies.ready`:

* a ready set (llvm-cpu): the ready library, :func:`tdsl.strategies.cpu.auto` for the host (or given) ISA;
  the listing says which of its rules cover which dispatch.
* a chooser (rocm, gfx942): one chooser rule per contraction dispatch (:func:`~tdsl.strategies.gpu.chooser.choose_contraction`:
  any batch / m / n / k groups, the loops in any order) and per convolution dispatch
  (:func:`~tdsl.strategies.gpu.chooser.choose_convolution`: implicit GEMM, any layout,
  batch or none, strides, dilations), matched by the exact codegen matcher of the listing
  (with ``loop_order`` where a contraction's loops are not in batch, m, n, k order); ops of
  one shape share a rule. A dispatch the chooser cannot express (e.g. a depthwise
  convolution: no input channel loop for the implicit GEMM) is listed with the chooser's
  reason (field and value) in a comment, never dropped silently.

Each rule is commented with the dispatch it targets. Emits Python source
(:meth:`Emitted.python`) or YAML (:meth:`Emitted.yaml`, the same comments as YAML comments);
requires nothing beyond tdsl.
"""

from __future__ import annotations

from ..compiler.ops import Dispatch, ProgramOps
from ..errors import TdslError
from ..sets.strategy_set import Rule, StrategySet
from ..targets import Target
from ..tune.emitted import Emitted
from .ready import CHOOSERS, READY_SETS, ready_set


def _symbol(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else f"s_{cleaned}"


def _describe(d: Dispatch) -> str:
    root = d.root
    where = f"{root.name} [{root.loop_roles()}] {root.shapes()}" if root else "no root op"
    return f"{d.name} (x{d.launches}): {where}"


def emit(ops: ProgramOps, target: Target, name: str, ready: StrategySet | None = None) -> Emitted:
    """The set described in the module docstring for the program ``ops`` lists: ``ready``
    or the ready set of ``target``'s kind with its coverage, else one rule per dispatch
    from the kind's chooser (:mod:`tdsl.strategies.ready`)."""
    chooser = CHOOSERS.get(target.kind)
    if target.kind in READY_SETS or chooser is None:
        ready = ready if ready is not None else ready_set(target)
        if ready is None:
            raise TdslError(f"target {target.name!r} ({target.kind}): no ready strategies or chooser to emit")
        return _ready(ops, target, name, ready)
    rules: list[Rule] = []
    comments: list[str] = []
    left: list[str] = []
    for i, d in enumerate(ops.dispatches):
        choice = chooser(d, f"d{i}_{_symbol(d.root.name.split('.')[-1]) if d.root else 'op'}")
        if isinstance(choice, str):
            left.append(f"{_describe(d)}: {choice}")
            continue
        match, lowering = choice
        same = next((j for j, r in enumerate(rules) if r.match == match), None)
        if same is not None:  # an op of the same shape: the earlier rule configures it too
            comments[same] += f"; also {d.name} (x{d.launches})"
            continue
        rules.append(Rule(target=target.name, match=match, strategy=lowering))
        comments.append(_describe(d))
    return Emitted(StrategySet(name=_symbol(name), targets=[target], rules=rules), tuple(comments), tuple(left))


def _ready(ops: ProgramOps, target: Target, name: str, ready: StrategySet) -> Emitted:
    """``ready`` as the emitted set, with the dispatches it covers and those it leaves to IREE."""
    covered = [f"covered: {d.name}: {', '.join(d.covered_by)}" for d in ops.dispatches if d.covered_by]
    own = ready.target(target.name) if any(t.name == target.name for t in ready.targets) else target
    bare = [
        f"{_describe(d)}: no ready rule applies ({own.fallback_path()})" for d in ops.dispatches if not d.covered_by
    ]
    emitted = StrategySet(name=_symbol(name), targets=ready.targets, rules=ready.rules)
    return Emitted(emitted, tuple(f"ready rule {r.strategy.name}" for r in ready.rules), tuple(bare + covered))


__all__ = ["Emitted", "emit"]
