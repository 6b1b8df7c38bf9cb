"""The page handlers, one module per page or family of pages; ``routes``, every page's
routes; ``site``, what every handler shares (database, settings, access, signer, templates).

May import ``view`` and ``auth``."""

__all__ = [
    "account",
    "alert",
    "cases",
    "evals",
    "investigations",
    "live",
    "names",
    "playbook",
    "quality",
    "routes",
    "site",
    "suppressions",
    "usage",
]
