"""What the pages draw from stored records: the investigation view, its timeline (SVG),
SQL laid out for reading. Pure: no request, no database.

May import ``auth`` only."""

__all__ = [
    "cases",
    "header",
    "investigation",
    "listing",
    "results",
    "sql_layout",
    "timeline",
    "when",
]
