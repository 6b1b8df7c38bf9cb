"""Helpers every command module shares; light to import (typer only).

A command module builds its own ``app = command_app()``, attaches its command(s)
to it, and is listed in ``cli.main.COMMANDS``, which imports it only when one of
its commands runs (or its ``--help`` is asked for).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from config.settings import Settings


def command_app(**kwargs: Any) -> typer.Typer:
    """A Typer for one command module, with the root's plain help (flags shown as flags)."""
    kwargs.setdefault("no_args_is_help", True)
    return typer.Typer(
        rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False, **kwargs
    )


def new_conversation_id() -> str:
    """A terminal conversation id (``cli:`` and 12 hex digits), for investigate and chat alike."""
    import uuid

    return f"cli:{uuid.uuid4().hex[:12]}"


def socbot_command() -> str:
    """How the user ran socbot, for hints: ``uv run socbot`` under ``uv run``, else ``socbot``."""
    return "uv run socbot" if os.environ.get("UV_RUN_RECURSION_DEPTH") else "socbot"


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line actionable error and return the Exit to raise."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def one_line(exc: BaseException) -> str:
    """The first line of the exception's message (its type name when it has none)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def load_settings_or_exit() -> Settings:
    """Settings, or a one-line error naming the bad setting (never echoing its value)."""
    import tomllib

    from pydantic import ValidationError

    from config.settings import DEFAULT_CONFIG_PATH, ConfigError, load_settings

    try:
        return load_settings()
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        where = ".".join(str(part) for part in errors[0]["loc"]) or "settings"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = errors[0]["msg"].removeprefix("Value error, ")
        raise fail(
            f"invalid setting {where}: {message}{more} "
            "(check the config file and SOCBOT_* variables)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        path = os.environ.get("SOCBOT_CONFIG", str(DEFAULT_CONFIG_PATH))
        raise fail(f"{path} is not valid TOML: {one_line(exc)}") from None
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
