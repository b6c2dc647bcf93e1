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

from dataclasses import dataclass

from tdsl import Rule, StrategySet, TdslError, dump
from tdsl.compiler.ops import Dispatch, ProgramOps, python_names, python_source
from tdsl.strategies.gpu.dispatch import gpu_problem as gpu_problem  # tdsl.tune.gfx942 reads it here
from tdsl.strategies.ready import CHOOSERS, READY_SETS, ready_set
from tdsl.targets import Target


@dataclass(frozen=True)
class Emitted:
    """The emitted set, a comment per rule (the dispatch it targets) and the dispatches
    left out with the reason."""

    strategies: StrategySet
    comments: tuple[str, ...]
    left_out: tuple[str, ...]
    source: str = "tdsl ops --emit"
    """The command that emitted the set (named in the header)."""
    notes: tuple[str, ...] = ()
    """Lines for the header, after the first (e.g. the machine the figures were measured on)."""

    def python(self, variable: str = "strategies") -> str:
        """A Python module that builds the set, each rule commented with its dispatch."""
        names = sorted({n for r in self.strategies.rules for x in (r.match, r.strategy) for n in python_names(x)}
                       | {type(t).__name__ for t in self.strategies.targets} | {"StrategySet"} | ({"Rule"} if self.strategies.rules else set()))
        lines = [
            *self._docstring(),
            "",
            f"from tdsl import {', '.join(names)}",
            "",
            f"{variable} = StrategySet(",
            f'    name="{self.strategies.name}",',
            "    targets=[" + ", ".join(python_source(t) for t in self.strategies.targets) + "],",
            "    rules=[" if self.strategies.rules else "    rules=[],  # none: the target's flags are the whole strategy",
        ]
        for rule, comment in zip(self.strategies.rules, self.comments):
            lines.append(f"        # {comment}")
            lines.append(f'        Rule(target="{rule.target}", match={python_source(rule.match)},')
            optional = ", optional=True" if rule.optional else ""
            lines.append(f"             strategy={python_source(rule.strategy)}{optional}),")
        if self.strategies.rules:
            lines.append("    ],")
        lines.append(")")
        lines += [f"# not covered: {reason}" for reason in self.left_out]
        return "\n".join(lines) + "\n"

    def _docstring(self) -> list[str]:
        first = f"Strategies for {self.strategies.name}, emitted by `{self.source}`; edit freely."
        if not self.notes:
            return [f'"""{first}"""']
        return [f'"""{first}', "", *self.notes, '"""']

    def yaml(self) -> str:
        """The set as YAML (:func:`tdsl.dump`), headed by a comment per rule (the dispatch it
        targets) and followed by the dispatches left out with the reason, as comments."""
        head = [f"# Strategies for {self.strategies.name}, emitted by `{self.source}`; edit freely."]
        head += [f"# {line}" if line else "#" for line in self.notes]
        head += [f"# rule {rule.strategy.name}: {comment}" for rule, comment in zip(self.strategies.rules, self.comments)]
        tail = [f"# not covered: {reason}" for reason in self.left_out]
        body: str = dump(self.strategies, "yaml")
        return "\n".join(head) + "\n" + body + "".join(f"{line}\n" for line in tail)


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
    bare = [f"{_describe(d)}: no ready rule applies ({own.fallback_path()})" for d in ops.dispatches if not d.covered_by]
    emitted = StrategySet(name=_symbol(name), targets=ready.targets, rules=ready.rules)
    return Emitted(emitted, tuple(f"ready rule {r.strategy.name}" for r in ready.rules), tuple(bare + covered))
