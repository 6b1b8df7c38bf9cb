"""socbot investigate and socbot chat (engine issue)."""

from __future__ import annotations

from cli.app import app  # noqa: F401
