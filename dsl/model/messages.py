"""How a field problem is worded: received values formatted on one line (:func:`fmt`) and
the error a validator raises (:func:`problem`: field, what was expected, what was received)."""

from __future__ import annotations

import math

from pydantic import BaseModel
from pydantic_core import PydanticCustomError

_MAX_ITEMS = 16  # list entries shown in a message
_MAX_TEXT = 120  # characters of a received string shown in a message


class Described(str):
    """A received value that is already a description (printed without quotes)."""


def one_line(text: str) -> str:
    """``text`` with every line break and control character escaped (``\\n``): one error,
    one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _int_text(value: int) -> str:
    bits = abs(value).bit_length()
    if bits <= 128:
        return str(value)
    digits = int((bits - 1) * math.log10(2)) + 1
    return f"{'-' if value < 0 else ''}an integer of about {digits} digits (about 2**{bits - 1})"


def _fmt(value: object, depth: int = 0) -> str:
    if isinstance(value, Described):
        return str(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return _int_text(value)
    if isinstance(value, str):
        text = repr(value[:_MAX_TEXT])
        return text + ("..." if len(value) > _MAX_TEXT else "")
    if depth > 3:
        return "..."
    if isinstance(value, (list, tuple)):
        items = [_fmt(v, depth + 1) for v in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"... ({len(value)} entries)")
        return "[" + ", ".join(items) + "]"
    if isinstance(value, BaseModel):
        kind = getattr(value, "kind", type(value).__name__)
        return f"<{kind}>"
    if isinstance(value, dict):
        pairs = [
            f"{_fmt(k, depth + 1) if not isinstance(k, str) else k}: {_fmt(v, depth + 1)}"
            for k, v in list(value.items())[:_MAX_ITEMS]
        ]
        if len(value) > _MAX_ITEMS:
            pairs.append(f"... ({len(value)} entries)")
        return "{" + ", ".join(pairs) + "}"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a received value must never break its own message
        text = f"<{type(value).__name__}>"
    return text[: 2 * _MAX_TEXT] + ("..." if len(text) > 2 * _MAX_TEXT else "")


def fmt(value: object) -> str:
    """Formats a received value compactly for an error message, on one line: strings are
    quoted with their line breaks escaped, long lists and huge integers are shortened."""
    return one_line(_fmt(value))


def problem(field: str, expected: str, received: object, hint: str = "", strategy: str = "") -> PydanticCustomError:
    """Builds the error a validator raises: ``raise problem("tile_sizes[1]", "...", value)``.

    ``field`` is relative to the model whose validator raises (empty for the field itself);
    ``strategy`` re-anchors the message at a named strategy below that model.
    """
    ctx = {
        "field": field,
        "expected": expected,
        "received": fmt(received),
        "hint": hint,
        "strategy": strategy,
    }
    return PydanticCustomError("tdsl", "{field}: expected {expected}, received {received}", ctx)
