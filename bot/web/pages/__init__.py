"""The page handlers, one module per page or family of pages."""

__all__ = ["evals", "investigations", "live", "more", "site", "suppressions"]
