"""Which settings files are read, the local override, and database URLs as people type them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from config.database_url import ASYNC_SCHEMES, async_database_url, driver_hint, sqlite_file
from config.settings import config_files, config_notice, load_settings


@pytest.mark.parametrize(
    ("typed", "used"),
    [
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite:////abs/x.db", "sqlite+aiosqlite:////abs/x.db"),
        ("SQLite+pysqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgres://u:p@db/socbot", "postgresql+asyncpg://u:p@db/socbot"),
        ("postgresql://u@db:5432/socbot", "postgresql+asyncpg://u@db:5432/socbot"),
        ("postgresql+psycopg2://u@db/socbot", "postgresql+asyncpg://u@db/socbot"),
        ("postgresql+asyncpg://u@db/socbot", "postgresql+asyncpg://u@db/socbot"),
    ],
)
def test_sync_spellings_map_to_the_async_driver(typed: str, used: str) -> None:
    assert async_database_url(typed) == used


@pytest.mark.parametrize("url", ["mysql://u@h/db", "x.db", "oracle+cx_oracle://h/db"])
def test_unsupported_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"sqlite:///.*postgresql://"):
        async_database_url(url)


def test_every_target_is_an_async_driver() -> None:
    assert {v.split("+")[1] for v in ASYNC_SCHEMES.values()} == {"aiosqlite", "asyncpg"}
    assert "socbot[postgres]" in driver_hint("asyncpg")


def test_settings_take_the_url_people_type(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "sqlite:///x.db")
    assert load_settings().database_url == "sqlite+aiosqlite:///x.db"


def test_sqlite_url_runs_a_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'x.db'}")
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_unsupported_url_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "mysql://root@localhost/socbot")
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: invalid setting database_url")


def test_local_file_overrides_the_default_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "socbot.toml").write_text(
        '[slack]\nwebhook_channel = "CDEFAULT1"\nmax_concurrent_investigations = 5\n'
    )
    assert config_notice() == "config: config/socbot.toml"
    (tmp_path / "config" / "socbot.local.toml").write_text(
        '[slack]\nalert_channels = ["CMINE001"]\n'
    )
    settings = load_settings()
    assert settings.slack.alert_channels == ["CMINE001"]
    assert settings.slack.webhook_channel == "CDEFAULT1"  # merged, not replaced
    assert settings.slack.max_concurrent_investigations == 5
    assert config_files() == [Path("config/socbot.toml"), Path("config/socbot.local.toml")]
    assert config_notice() == "config: config/socbot.toml, config/socbot.local.toml"


def test_no_settings_file_is_a_warning_naming_the_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    notice = config_notice()
    assert notice.startswith("warning: no settings file")
    assert str(tmp_path) in notice and "SOCBOT_CONFIG" in notice
    result = CliRunner().invoke(app, ["tools", "list"])
    assert "warning: no settings file" in result.stderr


def test_the_local_override_is_ignored_by_git() -> None:
    ignore = (Path(__file__).resolve().parents[2] / ".gitignore").read_text().splitlines()
    assert "config/*.local.toml" in ignore


@pytest.mark.parametrize(
    ("url", "file"),
    [
        ("sqlite+aiosqlite:///./var/socbot.db", "{cwd}/var/socbot.db"),  # the default
        ("sqlite:///x.db?mode=rwc", "{cwd}/x.db"),
        ("SQLite:////srv/socbot/socbot.db", "/srv/socbot/socbot.db"),
        ("sqlite+aiosqlite:///:memory:", None),
        ("sqlite://", None),
        ("postgresql://socbot@db.internal/socbot", None),
    ],
)
def test_the_sqlite_file_a_url_names(
    url: str, file: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    expected = file.format(cwd=tmp_path) if file else None
    assert sqlite_file(url) == expected
