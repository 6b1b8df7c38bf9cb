"""The typer application; command modules attach their commands to ``app``."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="socbot",
    help="socbot investigates security alerts with Plan & Execute on Gemini.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line actionable error and return the Exit to raise."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)
