"""A StrategySet that covers a program, from its op listing (``tdsl ops --emit``).

* llvm-cpu: the ready library, :func:`tdsl.strategies.cpu.auto` for the host (or given) ISA;
  the listing says which of its rules cover which dispatch.
* gfx942: one chooser rule per contraction dispatch (:func:`~tdsl.strategies.gpu.chooser.choose_contraction`,
  matched by the exact codegen matcher of the listing) and per 2-D convolution dispatch
  with a batch (:func:`~tdsl.strategies.gpu.chooser.choose_convolution`). A dispatch the
  chooser cannot express (a multi-dimensional M/N/K group, a convolution with its unit
  batch dropped, strides or dilations) is listed as such in a comment, never dropped
  silently.

Each rule is commented with the dispatch it targets. Emits Python source (or YAML via
:func:`tdsl.dump`); requires nothing beyond tdsl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from tdsl import AmdGpuTarget, ContractionMatch, ConvolutionMatch, CpuTarget, GpuLowering, Rule, StrategySet, TdslError
from tdsl.iree.ops import Dispatch, ProgramOps, python_source
from tdsl.strategies.gpu.chooser import Contraction, Convolution2d, choose_contraction, choose_convolution


@dataclass(frozen=True)
class Emitted:
    """The emitted set, a comment per rule (the dispatch it targets) and the dispatches
    left out with the reason."""

    strategies: StrategySet
    comments: tuple[str, ...]
    left_out: tuple[str, ...]

    def python(self, variable: str = "strategies") -> str:
        """A Python module that builds the set, each rule commented with its dispatch."""
        names = sorted({type(x).__name__ for r in self.strategies.rules for x in (r.match, r.strategy)}
                       | {type(t).__name__ for t in self.strategies.targets} | {"Rule", "StrategySet"})
        lines = [
            f'"""Strategies for {self.strategies.name}, emitted by `tdsl ops --emit`; edit freely."""',
            "",
            f"from tdsl import {', '.join(names)}",
            "",
            f"{variable} = StrategySet(",
            f'    name="{self.strategies.name}",',
            "    targets=[" + ", ".join(python_source(t) for t in self.strategies.targets) + "],",
            "    rules=[",
        ]
        for rule, comment in zip(self.strategies.rules, self.comments):
            lines.append(f"        # {comment}")
            lines.append(f'        Rule(target="{rule.target}", match={python_source(rule.match)},')
            lines.append(f"             strategy={python_source(rule.strategy)}),")
        lines.append("    ],")
        lines.append(")")
        lines += [f"# not covered: {reason}" for reason in self.left_out]
        return "\n".join(lines) + "\n"


def _symbol(text: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else f"s_{cleaned}"


def _describe(d: Dispatch) -> str:
    root = d.root
    where = f"{root.name} [{root.loop_roles()}] {root.shapes()}" if root else "no root op"
    return f"{d.name} (x{d.launches}): {where}"


def _gpu_choice(d: Dispatch, name: str) -> Union[GpuLowering, str]:
    """The chooser's configuration for ``d``, or why the chooser cannot express it."""
    root, match = d.root, d.codegen_matcher
    if root is None:
        return "no root op"
    if isinstance(match, ContractionMatch):
        groups = {role: root.sizes(role) for role in ("batch", "m", "n", "k")}
        if any(len(groups[role]) != 1 for role in ("m", "n", "k")):
            return f"contraction with multi-dimensional groups {groups} (the chooser takes one m, n and k loop)"
        order = "".join(letter for letter in root.loop_roles() if letter in "mnk")
        problem = Contraction(tuple(groups["batch"]), groups["m"][0], groups["n"][0], groups["k"][0],
                              match.lhs_type, match.rhs_type, match.output_type, loop_order=order)
        try:
            return choose_contraction(problem, name)
        except TdslError as err:
            return str(err)
    if isinstance(match, ConvolutionMatch):
        sizes = {role: root.sizes(role) for role in ("batch", "output_image", "output_channel", "filter_loop", "input_channel")}
        shape_ok = len(sizes["batch"]) == 1 and len(sizes["output_image"]) == 2 and len(sizes["filter_loop"]) == 2
        if not shape_ok or any(s != 1 for s in (*root.strides, *root.dilations)):
            return (f"convolution the chooser cannot express: groups {sizes}, strides {list(root.strides)}, "
                    f"dilations {list(root.dilations)} (it takes a 2-D unit-stride convolution with a batch loop)")
        layout = "nchw" if root.loop_roles().startswith("bf") else "nhwc"
        (oh, ow), (kh, kw) = sizes["output_image"], sizes["filter_loop"]
        conv = Convolution2d(sizes["batch"][0], oh, ow, sizes["output_channel"][0], kh, kw, sizes["input_channel"][0],
                             match.lhs_type, match.rhs_type, match.output_type, layout)
        try:
            return choose_convolution(conv, name)
        except TdslError as err:
            return str(err)
    return "not a contraction or convolution"


def emit(ops: ProgramOps, target: CpuTarget | AmdGpuTarget, name: str, ready: StrategySet | None = None) -> Emitted:
    """The set described in the module docstring for the program ``ops`` lists."""
    if isinstance(target, CpuTarget):
        if ready is None:
            from tdsl.strategies.cpu import auto

            ready = auto()
        covered = [f"covered: {d.name}: {', '.join(d.covered_by)}" for d in ops.dispatches if d.covered_by]
        bare = [f"{_describe(d)}: no ready rule applies (IREE's default pipeline)" for d in ops.dispatches if not d.covered_by]
        emitted = StrategySet(name=_symbol(name), targets=ready.targets, rules=ready.rules)
        return Emitted(emitted, tuple(f"ready rule {r.strategy.name}" for r in ready.rules), tuple(bare + covered))
    rules: list[Rule] = []
    comments: list[str] = []
    left: list[str] = []
    for i, d in enumerate(ops.dispatches):
        same = next((j for j, r in enumerate(rules) if d.codegen_matcher is not None and r.match == d.codegen_matcher), None)
        if same is not None:  # an op of the same shape: the earlier rule configures it too
            comments[same] += f"; also {d.name} (x{d.launches})"
            continue
        choice = _gpu_choice(d, f"d{i}_{_symbol(d.root.name.split('.')[-1]) if d.root else 'op'}")
        if isinstance(choice, str):
            left.append(f"{_describe(d)}: {choice}")
            continue
        assert d.codegen_matcher is not None
        rules.append(Rule(target=target.name, match=d.codegen_matcher, strategy=choice))
        comments.append(_describe(d))
    return Emitted(StrategySet(name=_symbol(name), targets=[target], rules=rules), tuple(comments), tuple(left))
