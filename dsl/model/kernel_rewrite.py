"""Rewrites at kernel configuration: a :class:`KernelRewrite` runs in the codegen library's
``__kernel_config`` on each matched op, and IREE then configures the rewritten op with its
own pipeline (the rule sets no configuration).

``generalize`` emits ``transform.structured.generalize`` (a named op becomes a
``linalg.generic``, which IREE configures as a generic); the rewritten op is then marked
(``tdsl.applied``, ``tdsl.rule``). This is the form codegen libraries use to send an op
"down normal IREE codegen" as a generic (IREE's ``samples/transform_dialect``).

Example::

    KernelRewrite(name="mm_as_generic", generalize=True)
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from .base import StrictBool, SymbolName, problem
from .kinds import Backend, Injection, StrategyKind


class KernelRewrite(StrategyKind):
    """Rewrites the matched op in the codegen library and leaves its configuration to IREE;
    see the module docstring."""

    injection: ClassVar[Injection] = Injection.CODEGEN_LIBRARY
    backends: ClassVar[frozenset[Backend]] = frozenset({Backend.LLVM_CPU, Backend.ROCM})
    template: ClassVar[str] = "strategies/kernel_rewrite.mlir.j2"

    kind: Literal["kernel_rewrite"] = "kernel_rewrite"
    """The discriminator: a rewrite in the codegen library's __kernel_config."""
    name: SymbolName
    """The strategy's name: its action symbol, locations and the tdsl.applied marker."""
    generalize: StrictBool = True
    """Emit transform.structured.generalize (a named op becomes a linalg.generic)."""

    @model_validator(mode="after")
    def _check(self) -> "KernelRewrite":
        if not self.generalize:
            raise problem("generalize", "True (generalize is the rewrite a KernelRewrite runs)", False)
        return self
