"""Helpers every command module shares; light to import (typer only).

A command module builds its own ``app = command_app()``, attaches its command(s)
to it, and is listed in ``cli.main.COMMANDS``, which imports it only when one of
its commands runs (or its ``--help`` is asked for).
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from config.settings import Settings


def command_app(**kwargs: Any) -> typer.Typer:
    """A Typer for one command module, with the root's plain help (flags shown as flags;
    ``-h`` as well as ``--help``)."""
    kwargs.setdefault("no_args_is_help", True)
    kwargs.setdefault("add_completion", False)
    kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
    return typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, **kwargs)


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


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` without terminal control characters (escape sequences from hostile data)."""
    return _CONTROL.sub("", text)


def notice(text: str) -> None:
    """One dim line on stderr (never wrapped: a pipe or a log file gets it whole)."""
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True).print(escape(text), style="dim", highlight=False)


def config_notice_line(settings: Settings) -> None:
    """Say on stderr which settings files were read, or warn that there is none."""
    from config.settings import config_notice

    notice(config_notice(settings.database_url))


class _StderrLine(logging.Handler):
    """Log records as one ``warning: ...`` line each on the current ``sys.stderr``."""

    def __init__(self, level: int, tracebacks: bool) -> None:
        super().__init__(level)
        self.tracebacks = tracebacks

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = one_line(Exception(record.getMessage()))
            if record.exc_info and record.exc_info[1] is not None:
                text += f": {one_line(record.exc_info[1])}"
            line = f"{record.levelname.lower()}: {clean(text)}"
            if self.tracebacks and record.exc_info:
                line += "\n" + clean(logging.Formatter().formatException(record.exc_info))
            sys.stderr.write(line + "\n")
        except Exception:  # a log line must never end the command
            self.handleError(record)


@contextmanager
def cli_logging(*, quiet: bool = False, verbose: bool = False) -> Iterator[None]:
    """Warnings from socbot and its libraries as one stderr line each while the block runs
    (``-q``: errors only; ``-v``: with tracebacks), instead of Python's bare fallback."""
    handler = _StderrLine(logging.ERROR if quiet else logging.WARNING, tracebacks=verbose)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The main model, provider:model (openai:gpt-5-mini; a bare name is Gemini); "
        "default models.main.",
    ),
]


def with_model(settings: Settings, model: str | None) -> Settings:
    """``settings`` with ``model`` as the main model (``--model``); exits on an unknown
    provider."""
    if not model:
        return settings
    try:
        models = settings.models.with_main(model)
    except ValueError as exc:
        raise fail(str(exc)) from None
    return settings.model_copy(update={"models": models})


def load_settings_or_exit(*, announce: bool = True) -> Settings:
    """Settings, or a one-line error naming the bad setting (never echoing its value).

    With ``announce``, the settings files read (or the warning that there is none) are
    then said once on stderr (``config_notice_line``): every command that reads settings
    says it. Pass ``False`` for ``--json`` / ``-q`` and where the command says it itself
    (``investigate`` and ``chat`` once their runtime is open, ``serve`` in its start
    lines, ``tools list`` under its tables).
    """
    import tomllib

    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    from config.settings import ConfigError, load_settings

    try:
        settings = load_settings()
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise fail(f"{_setting_problem(errors[0])}{more} ({_where_settings_come_from()})") from None
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"{_broken_toml_file()} is not valid TOML: {one_line(exc)}") from None
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    except SettingsError as exc:  # a variable check_environment let through
        raise fail(f"{one_line(exc)} ({_where_settings_come_from()})") from None
    if announce:
        config_notice_line(settings)
    return settings


def _setting_problem(error: Any) -> str:
    """``invalid setting a.b: why``, or for a key no model has, ``unknown setting a.b``
    with the closest known key (a typo's likely fix)."""
    loc = [str(part) for part in error["loc"]]
    where = ".".join(loc) or "settings"
    if error["type"] != "extra_forbidden":
        return f"invalid setting {where}: {error['msg'].removeprefix('Value error, ')}"
    import difflib

    from config.settings import Settings

    model: Any = Settings
    for part in loc[:-1]:
        field = getattr(model, "model_fields", {}).get(part)
        model = field.annotation if field is not None else None
    known = list(getattr(model, "model_fields", {}))
    close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
    hint = f" (did you mean {'.'.join([*loc[:-1], close[0]])}?)" if close else ""
    return f"unknown setting {where}{hint}"


def _where_settings_come_from() -> str:
    from config.settings import config_files

    files = ", ".join(str(path) for path in config_files())
    return f"check {files} and SOCBOT_* variables" if files else "check SOCBOT_* variables"


def _broken_toml_file() -> str:
    """The first settings file that does not parse (the error does not say which)."""
    import tomllib

    from config.settings import config_files, config_path

    for path in config_files():
        try:
            tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            return str(path)
    return str(config_path())
