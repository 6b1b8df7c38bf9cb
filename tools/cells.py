"""JSON-able forms of query result cells, shared by both log backends and the DuckDB worker.

Standard library only: the DuckDB worker process imports this module and nothing heavier.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from typing import Any


def json_value(value: Any) -> Any:
    """A JSON-able form of one cell (timestamps as ISO 8601, bytes as base64)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return str(value)
