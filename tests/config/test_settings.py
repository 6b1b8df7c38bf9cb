"""Settings: TOML file, SOCBOT_* variables, well-known variables, and secret hygiene."""

from __future__ import annotations

import logging
import re
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from config.settings import ConfigError, Settings, load_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "socbot.example.toml"

TOML = """
database_url = "sqlite+aiosqlite:///./var/from-toml.db"

[gemini]
model = "gemini-from-toml"
api_key = "toml-key-000"

[limits]
max_steps = 5
deadline_s = 90

[[logs.tables]]
name = "proj.logs.auth"
description = "sign-in events"
time_column = "ts"
"""


@pytest.fixture
def toml_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "socbot.toml"
    path.write_text(TOML)
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    return path


def test_defaults_without_a_file() -> None:
    settings = Settings()
    assert settings.database_url.startswith("sqlite+aiosqlite:///")
    assert settings.gemini.api_key is None
    assert settings.limits.max_steps == 8


@pytest.mark.usefixtures("toml_file")
def test_toml_file_is_read() -> None:
    settings = load_settings()
    assert settings.database_url.endswith("from-toml.db")
    assert settings.gemini.model == "gemini-from-toml"
    assert settings.limits.max_steps == 5
    assert settings.limits.deadline_s == 90
    assert settings.logs.tables[0].name == "proj.logs.auth"
    assert settings.gemini.api_key is not None
    assert settings.gemini.api_key.get_secret_value() == "toml-key-000"


@pytest.mark.usefixtures("toml_file")
def test_env_beats_toml_and_explicit_beats_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCBOT_LIMITS__MAX_STEPS", "3")
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "sqlite+aiosqlite:///./var/env.db")
    settings = load_settings()
    assert settings.limits.max_steps == 3
    assert settings.limits.deadline_s == 90  # untouched TOML value in the same section
    assert settings.database_url.endswith("env.db")
    assert load_settings(database_url="sqlite+aiosqlite:///:memory:").database_url.endswith(
        ":memory:"
    )


@pytest.mark.usefixtures("toml_file")
def test_well_known_variables_beat_toml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key-111")
    assert _key(load_settings()) == "google-key-111"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key-222")  # wins over GOOGLE_API_KEY
    assert _key(load_settings()) == "gemini-key-222"
    monkeypatch.setenv("SOCBOT_GEMINI__API_KEY", "socbot-key-333")  # SOCBOT_* wins over both
    assert _key(load_settings()) == "socbot-key-333"


def test_vertex_and_slack_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west1")
    monkeypatch.setenv("SOCBOT_GEMINI_BASE_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    settings = Settings()
    assert settings.gemini.use_vertexai is True
    assert (settings.gemini.project, settings.gemini.location) == ("my-project", "europe-west1")
    assert settings.gemini.base_url == "http://127.0.0.1:9999"
    assert settings.slack.bot_token is not None
    assert settings.slack.bot_token.get_secret_value() == "xoxb-test"


def test_secrets_never_appear_in_repr_or_logs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "sekret-gemini-key")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "sekret-signing")
    monkeypatch.setenv("VIRUSTOTAL_API_KEY", "sekret-vt")
    settings = Settings()
    with caplog.at_level(logging.INFO):
        logging.getLogger("socbot.test").info("settings: %s %r", settings, settings)
    rendered = repr(settings) + str(settings) + caplog.text + settings.model_dump_json()
    assert "sekret" not in rendered
    assert "**********" in repr(settings)


def test_missing_config_file_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCBOT_CONFIG", "/nonexistent/socbot.toml")
    with pytest.raises(ConfigError, match="SOCBOT_CONFIG"):
        load_settings()


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('databse_url = "sqlite+aiosqlite:///x.db"\n', "databse_url"),
        ("[limits]\nmax_stepz = 3\n", "max_stepz"),
        ('[[logs.tables]]\nname = "p.d.t"\ndescription = "d"\ntime_colum = "ts"\n', "time_colum"),
    ],
)
def test_unknown_keys_are_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, key: str
) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(toml)
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    with pytest.raises(ValueError, match=key):
        load_settings()


def test_documented_example_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example file parses, sets only known keys, and carries no secret values."""
    monkeypatch.setenv("SOCBOT_CONFIG", str(EXAMPLE))
    settings = load_settings()
    assert settings.gemini.api_key is None
    assert settings.slack.bot_token is None
    assert settings.logs.tables, "the example documents at least one log table"
    data = tomllib.loads(EXAMPLE.read_text())
    assert set(data) <= set(Settings.model_fields)


def _key(settings: Settings) -> str:
    assert settings.gemini.api_key is not None
    return settings.gemini.api_key.get_secret_value()


def _setting_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    paths = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths += _setting_paths(annotation, f"{prefix}{name}.")
        else:
            paths.append(prefix + name)
    return paths


@pytest.mark.parametrize("path", _setting_paths(Settings))
def test_example_documents_every_setting(path: str) -> None:
    """Each setting appears in the example, set or as a commented-out line, in its section."""
    *sections, key = path.split(".")
    text = EXAMPLE.read_text()
    if sections:
        header = f"[{'.'.join(sections)}]"
        assert header in text, f"section {header} missing from {EXAMPLE.name}"
        text = text.split(header, 1)[1].split("\n[", 1)[0]
    assert re.search(rf"^#? ?{key} =|\b{key}\b", text, re.MULTILINE), (
        f"{path} is not documented in {EXAMPLE.name}"
    )
