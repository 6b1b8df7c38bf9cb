"""Plain text tables for commands that print rows (``usage``, ``list``): columns padded,
the first ``left`` columns left-aligned and the rest (figures) right-aligned."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> str:
    """``header`` and ``rows`` as lines of padded columns (trailing spaces stripped)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return "\n".join([line(header), *(line(row) for row in rows)])
