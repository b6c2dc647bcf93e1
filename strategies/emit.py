"""A StrategySet that covers a program, from its op listing (``tdsl ops --emit``).

* llvm-cpu: the ready library, :func:`tdsl.strategies.cpu.auto` for the host (or given) ISA;
  the listing says which of its rules cover which dispatch.
* gfx942: one chooser rule per contraction dispatch (:func:`~tdsl.strategies.gpu.chooser.choose_contraction`:
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

from typing import Union

from ..errors import TdslError
from ..model.lowering import GpuLowering
from ..model.matchers import ContractionMatch, ConvolutionMatch
from ..sets.strategy_set import Rule, StrategySet
from ..targets import AmdGpuTarget, CpuTarget
from ..iree.ops import Dispatch, ProgramOps
from ..model.kinds import MatcherKind
from ..tune.emitted import Emitted
from .gpu.chooser import Contraction, Convolution, choose_contraction, choose_convolution


def _symbol(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else f"s_{cleaned}"


def _describe(d: Dispatch) -> str:
    root = d.root
    where = f"{root.name} [{root.loop_roles()}] {root.shapes()}" if root else "no root op"
    return f"{d.name} (x{d.launches}): {where}"


def gpu_problem(d: Dispatch) -> Union[tuple[MatcherKind, Union[Contraction, Convolution]], str]:
    """The rule's matcher (the listing's codegen matcher, with the loop order where the loops
    are not in batch, m, n, k order) and the chooser's problem for ``d``, or why there is none."""
    root, match = d.root, d.codegen_matcher
    if root is None:
        return "no root op"
    letters = root.loop_roles()
    if isinstance(match, ContractionMatch):
        groups = {role: tuple(root.sizes(role)) for role in ("batch", "m", "n", "k")}
        problem = Contraction(groups["batch"], groups["m"], groups["n"], groups["k"],
                              match.lhs_type, match.rhs_type, match.output_type, loop_order=letters)
        return problem.match(), problem
    if isinstance(match, ConvolutionMatch):
        sizes = {role: tuple(root.sizes(role)) for role in ("batch", "output_image", "output_channel", "filter_loop", "input_channel", "depth")}
        conv = Convolution(sizes["batch"], sizes["output_image"], sizes["output_channel"], sizes["filter_loop"], sizes["input_channel"],
                           match.lhs_type, match.rhs_type, match.output_type, letters, sizes["depth"], tuple(root.strides), tuple(root.dilations))
        return match, conv
    return "not a contraction or convolution"


def _gpu_choice(d: Dispatch, name: str) -> Union[tuple[MatcherKind, GpuLowering], str]:
    """The rule's matcher and the chooser's configuration for ``d`` (:func:`gpu_problem`),
    or why the chooser cannot express it."""
    found = gpu_problem(d)
    if isinstance(found, str):
        return found
    match, problem = found
    try:
        lowering = choose_contraction(problem, name) if isinstance(problem, Contraction) else choose_convolution(problem, name)
    except TdslError as err:
        return f"the chooser cannot express it: {err}"
    return match, lowering


def emit(ops: ProgramOps, target: CpuTarget | AmdGpuTarget, name: str, ready: StrategySet | None = None) -> Emitted:
    """The set described in the module docstring for the program ``ops`` lists."""
    if isinstance(target, CpuTarget):
        if ready is None:
            from .cpu import auto

            ready = auto()
        covered = [f"covered: {d.name}: {', '.join(d.covered_by)}" for d in ops.dispatches if d.covered_by]
        cpu = ready.target(target.name) if any(t.name == target.name for t in ready.targets) else target
        path = "IREE's data tiling path" if isinstance(cpu, CpuTarget) and cpu.data_tiling else "IREE's default pipeline"
        bare = [f"{_describe(d)}: no ready rule applies ({path})" for d in ops.dispatches if not d.covered_by]
        emitted = StrategySet(name=_symbol(name), targets=ready.targets, rules=ready.rules)
        return Emitted(emitted, tuple(f"ready rule {r.strategy.name}" for r in ready.rules), tuple(bare + covered))
    rules: list[Rule] = []
    comments: list[str] = []
    left: list[str] = []
    for i, d in enumerate(ops.dispatches):
        choice = _gpu_choice(d, f"d{i}_{_symbol(d.root.name.split('.')[-1]) if d.root else 'op'}")
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


__all__ = ["Emitted", "emit", "gpu_problem"]
