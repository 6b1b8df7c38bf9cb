"""Entry point: imports every command module so that its commands register."""

from __future__ import annotations

from cli import alerts_cmd, db_cmd, investigate, playbook_cmd, serve, tools_cmd  # noqa: F401  (registers commands)
from cli.app import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
