"""Guarded SQL: the guard that admits one read-only SELECT over catalogued tables, and the
functions such a query may call."""

__all__ = ["guard"]  # its public modules; ``_``-named ones are the wing's own
