"""The gfx942 chooser applied to one dispatch of an op listing (``tdsl ops``): the chooser's
problem for the dispatch's root op, and the rule's matcher and configuration for it.
Requires nothing beyond tdsl; emits nothing.
"""

from __future__ import annotations

from typing import Union

from ...compiler.ops import Dispatch
from ...errors import TdslError
from ...model.kinds import MatcherKind
from ...model.lowering import GpuLowering
from ...model.matchers import ContractionMatch, ConvolutionMatch
from .chooser import choose_contraction, choose_convolution
from .problems import Contraction, Convolution


def gpu_problem(d: Dispatch) -> Union[tuple[MatcherKind, Union[Contraction, Convolution]], str]:
    """The rule's matcher (the listing's codegen matcher, with the loop order where the loops
    are not in batch, m, n, k order) and the chooser's problem for ``d``, or why there is none."""
    root, match = d.root, d.codegen_matcher
    if root is None:
        return "no root op"
    letters = root.loop_roles()
    if isinstance(match, ContractionMatch):
        groups = {role: tuple(root.sizes(role)) for role in ("batch", "m", "n", "k")}
        problem = Contraction(
            groups["batch"],
            groups["m"],
            groups["n"],
            groups["k"],
            match.lhs_type,
            match.rhs_type,
            match.output_type,
            loop_order=letters,
        )
        return problem.match(), problem
    if isinstance(match, ConvolutionMatch):
        sizes = {
            role: tuple(root.sizes(role))
            for role in ("batch", "output_image", "output_channel", "filter_loop", "input_channel", "depth")
        }
        conv = Convolution(
            sizes["batch"],
            sizes["output_image"],
            sizes["output_channel"],
            sizes["filter_loop"],
            sizes["input_channel"],
            match.lhs_type,
            match.rhs_type,
            match.output_type,
            letters,
            sizes["depth"],
            tuple(root.strides),
            tuple(root.dilations),
        )
        return match, conv
    return "not a contraction or convolution"


def gpu_choice(d: Dispatch, name: str) -> Union[tuple[MatcherKind, GpuLowering], str]:
    """The rule's matcher and the chooser's configuration for ``d`` (:func:`gpu_problem`),
    or why the chooser cannot express it."""
    found = gpu_problem(d)
    if isinstance(found, str):
        return found
    match, problem = found
    try:
        lowering = (
            choose_contraction(problem, name) if isinstance(problem, Contraction) else choose_convolution(problem, name)
        )
    except TdslError as err:
        return f"the chooser cannot express it: {err}"
    return match, lowering
