"""``socbot tools list`` shows each MCP server's tools and why any of them is off."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.tools.mcp_support import SERVER


def test_tools_list_shows_mcp_tools_and_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "socbot.toml"
    config.write_text(
        f"""
[[mcp.servers]]
name = "assets"
command = {sys.executable!r}
args = [{str(SERVER)!r}]
tools = ["lookup_asset", "org_tree"]

[[mcp.servers]]
name = "vault"
command = {sys.executable!r}
args = [{str(SERVER)!r}]
env = {{ VAULT_TOKEN = "${{VAULT_TOKEN}}" }}
tools = ["lookup_asset"]
"""
    )
    monkeypatch.setenv("SOCBOT_CONFIG", str(config))
    monkeypatch.setenv("COLUMNS", "300")
    result = CliRunner().invoke(app, ["tools", "list"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[1]: line for line in result.output.splitlines() if "__" in line}
    assert "enabled" in lines["assets__lookup_asset"]
    assert "(MCP server assets, external)" in lines["assets__lookup_asset"]
    assert "cannot be declared to Gemini" in lines["assets__org_tree"]
    assert "not in the server's allowlist" in lines["assets__echo"]
    assert "VAULT_TOKEN is not set" in lines["vault__lookup_asset"]
