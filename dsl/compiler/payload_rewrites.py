"""The rewrites of a program's linalg IR a target asks for (:meth:`TargetKind.payload_rewrites`),
applied before a build.

:func:`rewritten_payload` compiles the payload to IREE's ``input`` phase (linalg on tensors:
an ONNX or torch program's ops converted, nothing optimized yet) with the target's flags,
applies each rewrite in process with the MLIR bindings, and writes the result, which
``iree-compile`` reads like any linalg program. A payload in which no rewrite changes
anything is returned as it was, so the build is IREE's on the original program.

==================================  ===================================================
rewrite                             what it does
==================================  ===================================================
``channels_last_depthwise_convs``   NCHW depthwise convs computed NHWC between
                                    transposes (:mod:`tdsl.bindings.depthwise`)
``convs_1d_as_2d``                  1-D convs computed as 2-D convs of unit height, which
                                    IREE's im2col takes (:mod:`tdsl.bindings.conv1d`)
``convs_as_matmuls``                2-D convs into a zero fill, their initial value added
                                    after, for IREE's im2col before the graph-level
                                    strategies (:mod:`tdsl.bindings.conv_init`)
==================================  ===================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from ..bindings.conv1d import conv1d_as_conv2d
from ..bindings.conv_init import convs_into_zero
from ..bindings.depthwise import depthwise_convs_channels_last
from ..targets import Target
from .iree_compile import run_iree_compile
from .options import CompileOptions


class PayloadRewrite(NamedTuple):
    """One rewrite: the function of the linalg module text (the new text and how many ops it
    rewrote), what a note says it did, and the words without which a payload holds nothing
    it acts on (the input phase is then skipped)."""

    rewrite: Callable[[str], tuple[str, int]]
    what: str
    words: tuple[str, ...]


REWRITES: dict[str, PayloadRewrite] = {
    "channels_last_depthwise_convs": PayloadRewrite(
        depthwise_convs_channels_last,
        "NCHW depthwise conv(s) computed channels-last",
        ("onnx.Conv", "convolution", "depthwise_conv"),
    ),
    "convs_1d_as_2d": PayloadRewrite(
        conv1d_as_conv2d, "1-D conv(s) computed as 2-D convs of unit height", ("onnx.Conv", "convolution", "conv_1d")
    ),
    "convs_as_matmuls": PayloadRewrite(
        convs_into_zero,
        "2-D conv(s) computed into a zero fill, their initial value added after",
        ("onnx.Conv", "convolution", "conv_2d", "conv_1d"),
    ),
}
"""Rewrite name (:meth:`TargetKind.payload_rewrites`) -> the rewrite."""


@dataclass(frozen=True)
class Rewritten:
    """The payload a build reads and the notes of what was rewritten (none: the original)."""

    payload: Path
    notes: tuple[str, ...] = ()


def rewritten_payload(payload: Path, target: Target, options: CompileOptions, workdir: Path) -> Rewritten:
    """``payload`` with ``target``'s payload rewrites applied (module docstring), written
    under ``workdir``; ``payload`` itself when there are none or none changed anything.
    A compile failure of the input phase raises :class:`~tdsl.compiler.iree_compile.CompileFailed`."""
    names = target.payload_rewrites()
    if not names:
        return Rewritten(payload)
    text = payload.read_text()
    if not any(word in text for name in names for word in REWRITES[name].words):
        return Rewritten(payload)
    linalg = workdir / f"{payload.stem}.input.mlir"
    run_iree_compile(payload, [*target.compile_flags(), *options.extra_flags, "--compile-to=input"], linalg, options)
    text = linalg.read_text()
    notes = []
    for name in names:
        text, count = REWRITES[name].rewrite(text)
        if count:
            notes.append(f"{name}: {count} {REWRITES[name].what}")
    if not notes:
        return Rewritten(payload)
    out = workdir / f"{payload.stem}.rewritten.mlir"
    out.write_text(text)
    return Rewritten(out, tuple(notes))
