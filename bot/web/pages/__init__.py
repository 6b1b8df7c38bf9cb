"""The page handlers, one module per page or family of pages, and ``site``: what every
handler shares (database, settings, access, signer, templates).

May import ``view`` and ``auth``."""

__all__ = ["evals", "investigations", "live", "more", "site", "suppressions"]
