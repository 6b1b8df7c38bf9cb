"""Guarded SQL: the guard that admits one read-only SELECT over catalogued tables, and the
functions such a query may call."""

__all__ = ["guard"]
