"""The log lines of ``socbot serve``: text, or one JSON object per line (``log.format``),
from ``log.level`` up, on stderr. Messages never carry alert or tool payloads unless
``debug_payloads`` is on (STYLE.md, logging)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import IO

from config.settings import LoggingSettings

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonLines(logging.Formatter):
    """``{"time", "level", "logger", "message"[, "exception"]}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def log_handler(settings: LoggingSettings, stream: IO[str] | None = None) -> logging.Handler:
    """A handler writing to ``stream`` (default stderr) in the chosen format and level."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLines() if settings.format == "json" else logging.Formatter(TEXT))
    handler.setLevel(settings.level)
    return handler


# Libraries whose INFO lines are retry chatter socbot says itself, in one line, when it
# matters (slack_sdk logs each connection retry of its Web API client).
QUIET_BELOW_DEBUG = ("slack_sdk.web",)


def configure_logging(settings: LoggingSettings) -> None:
    """Log from ``log.level`` up to stderr in ``log.format`` — unless the process has set
    up logging already (``logging.basicConfig`` semantics: tests, an embedding program)."""
    logging.basicConfig(handlers=[log_handler(settings)], level=settings.level)
    if settings.level != "DEBUG":
        for name in QUIET_BELOW_DEBUG:
            logging.getLogger(name).setLevel(logging.WARNING)
