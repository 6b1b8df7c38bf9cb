"""The page handlers, one module per page or family of pages."""

__all__ = [
    "evals",
    "investigations",
    "live",
    "more",
    "site",
    "suppressions",
]  # its public modules; ``_``-named ones are the wing's own
