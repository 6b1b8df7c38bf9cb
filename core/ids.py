"""A row's number as written in a button value, a URL or a command: ``row_id``.

Such text may be written by anyone. ``str.isdigit`` is not the test to use before
``int``: it accepts ``"²"`` (which ``int`` refuses) and any length (which the database
refuses), and both crashed a handler. ``row_id`` reads 1 to 9 ASCII digits, else None.
"""

from __future__ import annotations

import re

_ROW_ID = re.compile(r"[0-9]{1,9}")  # fits a 32-bit integer column (PostgreSQL's integer)


def row_id(text: object) -> int | None:
    """``text`` as a row number, or None when it is not 1 to 9 ASCII digits."""
    return int(text) if isinstance(text, str) and _ROW_ID.fullmatch(text) else None
