"""A tool's result as the model sees it: a dict, cut to its budget as valid JSON data."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

# The last resort, with nothing in it: no cut result is smaller.
MIN_BUDGET = len(json.dumps({"truncated": True, "partial": ""}))


def truncate(data: dict[str, Any], budget: int) -> tuple[dict[str, Any], int, bool]:
    """Cut a result to ``budget`` JSON characters, keeping it valid JSON-able data.

    Long lists lose their tail items first, then long strings are clipped; the result
    carries ``truncated: true`` when anything was cut. When that is still too long, the
    result is the start of its JSON text as one string, ``partial``, escaped to fit.
    A budget below ``MIN_BUDGET`` is a programmer error.
    """
    if budget < MIN_BUDGET:
        raise ValueError(f"a result budget of {budget!r} is below {MIN_BUDGET!r} characters")
    size = len(json.dumps(data, ensure_ascii=False, default=str))
    if size <= budget:
        return data, size, False
    whole = json.loads(json.dumps(data, default=str))  # escaped or not: loads reads it back
    for limit in (200, 50, 20, 5, 1):  # each from the whole: the omitted counts stay true
        cut = _shrink(whole, items=limit, chars=max(budget // 4, 80))
        cut["truncated"] = True
        if len(json.dumps(cut, ensure_ascii=False)) <= budget:
            return cut, size, True
    text = _prefix(json.dumps(cut, ensure_ascii=False), budget - MIN_BUDGET)
    return {"truncated": True, "partial": text}, size, True


def _prefix(text: str, room: int) -> str:
    """The longest start of ``text`` whose JSON escaping (quotes, backslashes, control
    characters grow) takes at most ``room`` characters."""
    used = 0
    for end, char in enumerate(text):
        used += len(json.dumps(char, ensure_ascii=False)) - 2
        if used > room:
            return text[:end]
    return text


def _shrink(value: Any, *, items: int, chars: int) -> Any:
    if isinstance(value, dict):
        return {k: _shrink(v, items=items, chars=chars) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_shrink(v, items=items, chars=chars) for v in value[:items]]
        if len(value) > items:
            kept.append(f"... {len(value) - items} more items omitted")
        return kept
    if isinstance(value, str) and len(value) > chars:
        return value[:chars] + f"... [{len(value) - chars} chars omitted]"
    return value


def as_dict(value: Any) -> dict[str, Any]:
    """A tool's return value as the dict the model reads."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return value
    return {"result": value}


def validation_brief(exc: ValidationError) -> str:
    """What was wrong with the arguments, in one line."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
    )
