"""Element types tdsl knows, and their sizes (what LDS and packing estimates count)."""

from __future__ import annotations

from typing import Literal

from ..errors import TdslError

ElementType = Literal["f64", "f32", "f16", "bf16", "f8E4M3FNUZ", "f8E5M2FNUZ", "i64", "i32", "i16", "i8", "i4", "i1"]

ELEMENT_BITS: dict[str, int] = {
    "f64": 64,
    "f32": 32,
    "f16": 16,
    "bf16": 16,
    "f8E4M3FNUZ": 8,
    "f8E5M2FNUZ": 8,
    "i64": 64,
    "i32": 32,
    "i16": 16,
    "i8": 8,
    "i4": 4,
    "i1": 1,
}


def element_bytes(element: str) -> int:
    """Bytes one element takes in memory (sub-byte types round up to one byte); raises
    :class:`tdsl.errors.TdslError` for a type tdsl does not know."""
    bits = ELEMENT_BITS.get(element)
    if bits is None:
        raise TdslError(f"element type: expected one of {', '.join(ELEMENT_BITS)}, received {element!r}")
    return -(-bits // 8)
