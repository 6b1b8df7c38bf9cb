"""`socbot tools list`: enabled tools with descriptions, disabled ones with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "socbot.toml"
    path.write_text(f'database_url = "sqlite+aiosqlite:///{tmp_path / "socbot.db"}"\n')
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    monkeypatch.setenv("COLUMNS", "600")
    return path


def test_lists_enabled_and_disabled_tools_with_reasons(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIRUSTOTAL_API_KEY", "vt-test-key")
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()

    def row(name: str) -> str:
        return next(line for line in lines if f" {name} " in line)

    assert "enabled" in row("lookup_ip") and "Services: virustotal." in row("lookup_ip")
    assert "enabled" in row("search_past_alerts") and "enabled" in row("get_past_alert")
    assert "disabled" in row("query_logs") and "no log tables configured" in row("query_logs")
    assert "VIRUSTOTAL_API_KEY not set" not in result.output
    assert "configured" in row("virustotal")
    assert "ABUSEIPDB_API_KEY not set" in row("abuseipdb")
    assert "OTX_API_KEY not set" in row("otx")
    assert "vt-test-key" not in result.output
    assert not (config.parent / "socbot.db").exists()  # listing touches no database


def test_without_intel_keys_lookups_say_what_to_set(config: Path) -> None:
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if " lookup_url " in x)
    assert "disabled" in line
    assert "set OTX_API_KEY, VIRUSTOTAL_API_KEY or URLSCAN_API_KEY" in line
    assert "VIRUSTOTAL_API_KEY not set" in result.output


def test_bad_config_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCBOT_CONFIG", str(tmp_path / "missing.toml"))
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 2
    assert "error: SOCBOT_CONFIG points to" in result.output
    assert "Traceback" not in result.output


def test_invalid_setting_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "typo.toml"
    path.write_text("[limits]\nmax_stepz = 3\n")
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: unknown setting limits.max_stepz (did you mean limits.max_steps?) "
        f"(check {path} and SOCBOT_* variables)"
    ]
