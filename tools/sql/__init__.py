"""Guarded SQL: the guard that admits one read-only SELECT over catalogued tables, and the
allowlist of functions such a query may call (``_functions``).

May import config and sqlglot; the log backends (``tools.logs``) import it."""

__all__ = ["guard"]
