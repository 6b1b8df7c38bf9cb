"""The typer application; command modules attach their commands to ``app``."""

from __future__ import annotations

import os
import tomllib

import typer
from pydantic import ValidationError

from config.settings import DEFAULT_CONFIG_PATH, ConfigError, Settings, load_settings

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


def one_line(exc: BaseException) -> str:
    """The first line of the exception's message (its type name when it has none)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def load_settings_or_exit() -> Settings:
    """Settings, or a one-line error naming the bad setting (never echoing its value)."""
    try:
        return load_settings()
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        where = ".".join(str(part) for part in errors[0]["loc"]) or "settings"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise fail(
            f"invalid setting {where}: {errors[0]['msg']}{more} "
            "(check the config file and SOCBOT_* variables)"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        path = os.environ.get("SOCBOT_CONFIG", str(DEFAULT_CONFIG_PATH))
        raise fail(f"{path} is not valid TOML: {one_line(exc)}") from None
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
