"""Matchers on one operand's type and dimensions (``transform.get_operand`` then
``cast_compatible_type``, ``dim_is_multiple_of``, ``dim_bounds``)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Optional

from pydantic import Strict, model_validator

from ..base import MAX_RANK, OperandIndex, Size, StrategyModel, StrictBool, check_length, in_range, problem
from ..kinds import MatcherKind
from .dims import TensorTypeText


class DimConstraint(StrategyModel):
    """Constraints on dimension ``dim`` of an operand: ``multiple_of`` emits
    ``transform.iree.match.dim_is_multiple_of``, ``min`` / ``max`` emit
    ``transform.iree.match.dim_bounds`` (``umin`` / ``umax``)."""

    dim: Annotated[
        int, Strict(), in_range(0, MAX_RANK - 1, "a dimension index (0 or more)", f"a dimension index below {MAX_RANK}")
    ]
    """The operand dimension constrained (0-based)."""
    multiple_of: Optional[Annotated[int, Strict(), in_range(1, 2**63 - 1, "a positive size", "an MLIR i64")]] = None
    """The dim is a multiple of this: transform.iree.match.dim_is_multiple_of."""
    min: Optional[Size] = None
    """Lower bound on the dim: transform.iree.match.dim_bounds umin."""
    max: Optional[Size] = None
    """Upper bound on the dim: transform.iree.match.dim_bounds umax."""

    @model_validator(mode="after")
    def _check(self) -> "DimConstraint":
        if self.multiple_of is None and self.min is None and self.max is None:
            raise problem("multiple_of", "at least one of multiple_of, min and max", None)
        if self.min is not None and self.max is not None and self.min > self.max:
            raise problem("max", f"at least min ({self.min})", self.max)
        return self


class OperandMatch(MatcherKind):
    """Constraints on one operand (or, with ``result``, one result) of the op:
    ``transform.get_operand %op[operand]`` then ``transform.iree.match.cast_compatible_type``
    with ``type`` (a tensor type whose ``?`` dims match any size) and the ``dims``
    constraints (``dim_is_multiple_of``, ``dim_bounds``). Combine it in :class:`AllOf`
    with a matcher that selects the op, e.g.::

        OperandMatch(operand=0, type="tensor<?x?x64xf16>", dims=[DimConstraint(dim=1, multiple_of=128)])
    """

    template: ClassVar[Optional[str]] = "matchers/operand.mlir.j2"

    kind: Literal["operand"] = "operand"
    """The discriminator: transform.get_operand (or get_result) then type and dim checks."""
    operand: OperandIndex = 0
    """Index of the operand (transform.get_operand %op[operand]), or of the result with result set."""
    result: StrictBool = False
    """Must stay False: IREE 3.13 refuses transform.get_result in a matcher; constrain the init operand instead."""
    type: Optional[TensorTypeText] = None
    """A tensor type the value must be cast-compatible with (match.cast_compatible_type); '?' any size."""
    dims: tuple[DimConstraint, ...] = ()
    """Per-dimension constraints (dim_is_multiple_of, dim_bounds)."""

    @model_validator(mode="after")
    def _check(self) -> "OperandMatch":
        if self.result:
            raise problem(
                "result",
                "False: IREE 3.13 refuses transform.get_result inside a matcher ('expected operations in the match "
                "part to implement MatchOpInterface'); constrain the init operand instead (the last operand, "
                "which has the result's type)",
                True,
            )
        if self.type is None and not self.dims:
            raise problem("type", "a type and/or dims constraints", None)
        check_length("dims", self.dims, what="one per constrained dimension")
        rank = self.rank()
        for i, d in enumerate(self.dims):
            if rank is not None and d.dim >= rank:
                raise problem(
                    f"dims[{i}].dim", f"a dimension of the rank-{rank} type {self.type}: 0 to {rank - 1}", d.dim
                )
        return self

    def rank(self) -> Optional[int]:
        """The rank of ``type`` (None without one)."""
        if self.type is None:
            return None
        return self.type[len("tensor<") : -1].count("x")
