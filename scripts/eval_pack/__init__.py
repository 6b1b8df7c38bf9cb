"""Builders of the bundled eval pack (``evals/packs/core``); see ``make.py``."""
