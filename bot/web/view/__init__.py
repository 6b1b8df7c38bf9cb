"""What the pages draw from stored records: the investigation view, its timeline, SQL laid
out for reading."""

__all__ = ["investigation", "sql_layout", "timeline"]
