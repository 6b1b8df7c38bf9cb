"""``log.format`` and ``log.level`` of ``socbot serve``: JSON lines a collector can parse,
or text; records below the level are left out."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cli.serve.log_setup import log_handler
from config.settings import LoggingSettings, Settings


def logger_into(stream: io.StringIO, settings: LoggingSettings) -> logging.Logger:
    logger = logging.getLogger(f"socbot.test.{id(stream)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(log_handler(settings, stream))
    return logger


def test_json_lines_with_the_exception() -> None:
    out = io.StringIO()
    log = logger_into(out, LoggingSettings(format="json", level="INFO"))
    log.debug("left out")
    log.info("investigation %s started: thread=%s", "abc123", "C1:1.2")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("could not post")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["level"] == "INFO" and first["message"] == (
        "investigation abc123 started: thread=C1:1.2"
    )
    assert first["logger"].startswith("socbot.test.") and first["time"].endswith("+00:00")
    assert second["level"] == "ERROR" and second["exception"].endswith("ValueError: boom")


def test_text_lines_from_the_level_up() -> None:
    out = io.StringIO()
    log = logger_into(out, LoggingSettings(format="text", level="WARNING"))
    log.info("left out")
    log.warning("Slack asks to wait %ds", 120)
    [line] = out.getvalue().splitlines()
    assert line.endswith(" WARNING socbot.test." + line.split("socbot.test.")[1].split(":")[0]
                         + ": Slack asks to wait 120s")  # fmt: skip


def test_settings_read_log_format_and_level_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOCBOT_LOG__FORMAT", "json")
    monkeypatch.setenv("SOCBOT_LOG__LEVEL", "DEBUG")
    assert Settings().log == LoggingSettings(format="json", level="DEBUG")


def test_serve_against_an_unreachable_slack_is_one_line(tmp_path: Path) -> None:
    """slack_sdk's connection-retry lines stay below the level; socbot's error says it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOCBOT_", "SLACK_"))}
    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env |= {
        "SLACK_BOT_TOKEN": "xoxb-not-a-real-token",
        "SLACK_APP_TOKEN": "xapp-not-a-real-token",
        "SOCBOT_SLACK_API_URL": f"http://127.0.0.1:{port}/",
        "GEMINI_API_KEY": "not-a-real-key",
        "SOCBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'socbot.db'}",
    }
    done = subprocess.run(
        [str(Path(sys.executable).with_name("socbot")), "serve"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: cannot reach the Slack Web API at http://127.0.0.1:{port}/: Cannot connect to "
        f"host 127.0.0.1:{port} ssl:default [Connect call failed ('127.0.0.1', {port})]"
    ]
