"""The problems the gfx942 chooser configures: :class:`Contraction` (any batch, m, n and k
groups, the loops in any order), :class:`Convolution` (any layout, as ``tdsl ops`` spells
its loops) and :class:`Convolution2d` (the older 2-D shorthand), and the one GEMM view
(:class:`Gemm`: a role and size per loop) each becomes (see :mod:`.chooser`)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Sequence, Union

from ...errors import TdslError
from ...model.matchers import ContractionMatch, ConvolutionMatch


def _dims(value: Union[int, Sequence[int]]) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else tuple(value)


@dataclass(frozen=True)
class Gemm:
    """What the chooser configures: per loop its role (``b``, ``m``, ``n``, ``k``) and size,
    in the loop order of the op IREE tiles (a convolution's implicit GEMM), and the element
    types. ``Gemm(("m", "n", "k"), (128, 768, 768), "f32", "f32", "f32")``."""

    roles: tuple[str, ...]
    sizes: tuple[int, ...]
    lhs_type: str
    rhs_type: str
    output_type: str

    def loops(self, role: str) -> list[int]:
        """Indices of the loops with ``role``, outermost first."""
        return [i for i, r in enumerate(self.roles) if r == role]

    def extent(self, role: str) -> int:
        """The product of the sizes of the loops with ``role``."""
        return prod(self.sizes[i] for i in self.loops(role))


@dataclass(frozen=True)
class Contraction:
    """A contraction's problem, what :func:`choose_contraction` configures.

    ``batch``: the batch loop sizes (``()`` for a plain matmul, ``(8,)`` for a batch
    matmul); ``m``, ``n``, ``k``: the size of the group's loop, or its loop sizes when it has
    several (``m=(16, 16)``); ``lhs_type``, ``rhs_type``, ``output_type``: element types as
    MLIR spells them (``"f16"``, ``"f32"``, ``"i8"``); ``loop_order``: the roles of the loops,
    either of the non-batch loops (after the batch loops; ``"mnk"`` for ``linalg.matmul``,
    ``"nmk"``; one letter per group stands for all its loops) or of every loop with ``b``
    (``"mbnk"``). ``match()`` is the ContractionMatch that selects exactly it::

        Contraction((), 4096, 4096, 4096, "f16", "f16", "f32")
        Contraction((), (16, 16), 64, 32, "f32", "f32", "f32", loop_order="nmmk")
    """

    batch: tuple[int, ...]
    m: Union[int, tuple[int, ...]]
    n: Union[int, tuple[int, ...]]
    k: Union[int, tuple[int, ...]]
    lhs_type: str
    rhs_type: str
    output_type: str
    loop_order: str = "mnk"

    def groups(self) -> dict[str, tuple[int, ...]]:
        """The loop sizes of each role, ``b`` ``m`` ``n`` ``k``."""
        return {"b": tuple(self.batch), "m": _dims(self.m), "n": _dims(self.n), "k": _dims(self.k)}

    def roles(self) -> tuple[str, ...]:
        """The role of every loop, in loop order; raises when ``loop_order`` does not fit the groups."""
        groups = self.groups()
        order = self.loop_order
        if set(order) - set("bmnk"):
            raise TdslError(f"Contraction.loop_order: expected letters b, m, n, k, received {order!r}")
        if sorted(order) == ["k", "m", "n"] and any(len(groups[r]) != 1 for r in "mnk"):
            order = "".join(r * len(groups[r]) for r in order)  # one letter per group
        if "b" not in order:
            order = "b" * len(groups["b"]) + order
        for role, sizes in groups.items():
            if order.count(role) != len(sizes):
                raise TdslError(
                    f"Contraction.loop_order: expected {len(sizes)} '{role}' loop(s) (the {role} group has sizes "
                    f"{list(sizes)}), received {self.loop_order!r}"
                )
        return tuple(order)

    def gemm(self) -> Gemm:
        """The GEMM view: the contraction's own loops."""
        roles, groups = self.roles(), self.groups()
        taken = {r: 0 for r in groups}
        sizes = []
        for role in roles:
            sizes.append(groups[role][taken[role]])
            taken[role] += 1
        return Gemm(roles, tuple(sizes), self.lhs_type, self.rhs_type, self.output_type)

    def match(self) -> ContractionMatch:
        """The matcher that selects exactly this problem (with ``loop_order`` where the loops are not in batch, m, n, k order)."""
        roles = "".join(self.roles())
        groups = self.groups()
        canonical = "".join(r * len(groups[r]) for r in "bmnk")
        match: ContractionMatch = ContractionMatch.model_validate(
            {
                "lhs_type": self.lhs_type,
                "rhs_type": self.rhs_type,
                "output_type": self.output_type,
                "batch": list(self.batch),
                "m": list(groups["m"]),
                "n": list(groups["n"]),
                "k": list(groups["k"]),
                "loop_order": None if roles == canonical else roles,
            }
        )
        return match

    def __repr__(self) -> str:
        """Positional, as the docstring's example: ``Contraction((), 4096, 4096, 4096, 'f16', 'f16', 'f32')``."""
        order = "" if self.loop_order == "mnk" else f", loop_order={self.loop_order!r}"
        return (
            f"Contraction({self.batch!r}, {self.m!r}, {self.n!r}, {self.k!r}, {self.lhs_type!r}, "
            f"{self.rhs_type!r}, {self.output_type!r}{order})"
        )

    def per_loop(self, batch: int, m: int, n: int, k: int) -> list[int]:
        """A tile list in this op's loop order from per-role values."""
        by_role = {"b": batch, "m": m, "n": n, "k": k}
        return [by_role[r] for r in self.roles()]


_CONV_LETTERS = {
    "b": "batch",
    "o": "output_image",
    "f": "output_channel",
    "w": "filter",
    "c": "input_channel",
    "d": "depth",
}


@dataclass(frozen=True)
class Convolution:
    """A convolution as codegen sees it, what :func:`choose_convolution` configures: the
    loop sizes of each group (``batch`` may be ``()``: IREE drops a unit batch), element
    types, ``strides`` and ``dilations`` (matched exactly when given, ``()`` matches any;
    they do not change the configuration) and ``loop_order``, one letter per loop as ``tdsl ops`` prints it (``b``
    batch, ``o`` output image, ``f`` output channel, ``w`` filter window, ``c`` input
    channel, ``d`` depth): ``"foocww"`` is an NCHW/FCHW convolution without its batch,
    ``"boofwwc"`` an NHWC/HWCF one. ``match()`` is the ConvolutionMatch that selects exactly it::

        Convolution((), (32, 32), (32,), (3, 3), (32,), "f32", "f32", "f32", loop_order="foocww", strides=(2, 2))
    """

    batch: tuple[int, ...]
    output_image: tuple[int, ...]
    output_channel: tuple[int, ...]
    filter: tuple[int, ...]
    input_channel: tuple[int, ...]
    lhs_type: str
    rhs_type: str
    output_type: str
    loop_order: str
    depth: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    dilations: tuple[int, ...] = ()

    def _group(self, letter: str) -> tuple[int, ...]:
        sizes: tuple[int, ...] = getattr(self, _CONV_LETTERS[letter])
        return sizes

    def gemm(self) -> Gemm:
        """The implicit-GEMM view (see the module docstring); raises where IREE has none."""
        order = self.loop_order
        if set(order) - set(_CONV_LETTERS):
            raise TdslError(
                f"Convolution.loop_order: expected one of the letters {''.join(_CONV_LETTERS)} per loop, received {order!r}"
            )
        for letter, field in _CONV_LETTERS.items():
            if order.count(letter) != len(self._group(letter)):
                raise TdslError(
                    f"Convolution.loop_order: expected {len(self._group(letter))} '{letter}' loop(s) for {field} "
                    f"{list(self._group(letter))}, received {order!r}"
                )
        for field in ("output_channel", "input_channel", "output_image"):
            if not getattr(self, field):
                raise TdslError(
                    f"Convolution.{field}: expected at least one loop (IREE's implicit GEMM needs an output image, output "
                    f"channel and input channel loop; a depthwise convolution or pooling has none), received []"
                )
        channel_first = order.index("f") < order.index("o")
        image, channel = ("n", "m") if channel_first else ("m", "n")
        role = {"b": "b", "d": "b", "o": image, "f": channel}
        taken = {letter: 0 for letter in _CONV_LETTERS}
        roles, sizes = [], []
        for letter in order:
            if letter in role:
                roles.append(role[letter])
                sizes.append(self._group(letter)[taken[letter]])
            taken[letter] += 1
        roles.append("k")
        sizes.append(prod(self.filter) * prod(self.input_channel))
        return Gemm(tuple(roles), tuple(sizes), self.lhs_type, self.rhs_type, self.output_type)

    def match(self) -> ConvolutionMatch:
        """The matcher that selects exactly this convolution (every group, strides and dilations)."""
        match: ConvolutionMatch = ConvolutionMatch.model_validate(
            {
                "lhs_type": self.lhs_type,
                "rhs_type": self.rhs_type,
                "output_type": self.output_type,
                "batch": list(self.batch),
                "output_image": list(self.output_image),
                "output_channel": list(self.output_channel),
                "filter": list(self.filter),
                "input_channel": list(self.input_channel),
                "depth": list(self.depth),
                "strides": list(self.strides) if self.strides else None,
                "dilations": list(self.dilations) if self.dilations else None,
            }
        )
        return match


@dataclass(frozen=True)
class Convolution2d:
    """A 2-D convolution with one batch loop, unit strides and dilations (a shorthand for
    :class:`Convolution`): ``batch``; the output image ``oh`` x ``ow``; output channels
    ``oc``; the filter ``kh`` x ``kw``; input channels ``ic``; element types; ``layout``
    ``"nhwc"`` (``linalg.conv_2d_nhwc_hwcf``, loops ``boofwwc``) or ``"nchw"``
    (``linalg.conv_2d_nchw_fchw``, loops ``bfoocww``). ``match()`` is the ConvolutionMatch
    that selects exactly it::

        Convolution2d(2, 56, 56, 64, 3, 3, 64, "f16", "f16", "f32")
    """

    batch: int
    oh: int
    ow: int
    oc: int
    kh: int
    kw: int
    ic: int
    lhs_type: str
    rhs_type: str
    output_type: str
    layout: str = "nhwc"

    def __repr__(self) -> str:
        """Positional: ``Convolution2d(2, 56, 56, 64, 3, 3, 64, 'f16', 'f16', 'f32')``."""
        layout = "" if self.layout == "nhwc" else f", {self.layout!r}"
        return (
            f"Convolution2d({self.batch}, {self.oh}, {self.ow}, {self.oc}, {self.kh}, {self.kw}, {self.ic}, "
            f"{self.lhs_type!r}, {self.rhs_type!r}, {self.output_type!r}{layout})"
        )

    def general(self) -> Convolution:
        """The same problem as a :class:`Convolution`."""
        if self.layout not in ("nhwc", "nchw"):
            raise TdslError(f"Convolution2d.layout: expected 'nhwc' or 'nchw', received {self.layout!r}")
        return Convolution(
            (self.batch,),
            (self.oh, self.ow),
            (self.oc,),
            (self.kh, self.kw),
            (self.ic,),
            self.lhs_type,
            self.rhs_type,
            self.output_type,
            "boofwwc" if self.layout == "nhwc" else "bfoocww",
        )

    def match(self) -> ConvolutionMatch:
        """The matcher that selects exactly this convolution."""
        match: ConvolutionMatch = ConvolutionMatch.model_validate(
            {
                "lhs_type": self.lhs_type,
                "rhs_type": self.rhs_type,
                "output_type": self.output_type,
                "batch": [self.batch],
                "output_image": [self.oh, self.ow],
                "output_channel": [self.oc],
                "filter": [self.kh, self.kw],
                "input_channel": [self.ic],
            }
        )
        return match


Problem = Union[Contraction, Convolution, Convolution2d]
"""What :func:`~.chooser.choose` configures."""
