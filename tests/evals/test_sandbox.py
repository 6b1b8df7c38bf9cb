"""Each scenario's tools: only its own tables, recorded intel through the real lookup code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from config.settings import Settings
from evals.sandbox import close_registry, scenario_registry, scenario_settings
from evals.scenario import load_pack
from store.db.engine import Database
from tools.base import Budget, ToolRegistry

SCENARIO = "aws-root-console-login-tor"  # CloudTrail table, AbuseIPDB answer for the Tor IP


@pytest.fixture
async def tools(db: Database, tmp_path: Path) -> AsyncIterator[ToolRegistry]:
    (scenario,) = load_pack("core", SCENARIO)
    settings = scenario_settings(Settings(), scenario, tmp_path / "links")
    async with httpx.AsyncClient() as http:
        registry = scenario_registry(settings, scenario, db, http)
        try:
            yield registry
        finally:
            close_registry(registry)


async def call(registry: ToolRegistry, name: str, **args: Any) -> dict[str, Any]:
    result = await registry.dispatch(
        name, args, allowed=registry.names(), investigation_id="t", budget=Budget()
    )
    return result.data


async def test_a_scenario_sees_its_tables_and_no_other(tools: ToolRegistry) -> None:
    listed = await call(tools, "list_tables")
    assert [t["name"] for t in listed["tables"]] == ["eval.aws.cloudtrail"]
    rows = await call(
        tools,
        "query_logs",
        sql="SELECT event_name FROM `eval.aws.cloudtrail` WHERE source_ip = '185.220.101.42' "
        "ORDER BY event_time",
    )
    assert [r[0] for r in rows["rows"]][:2] == ["ConsoleLogin", "CreateUser"]
    other = await call(tools, "query_logs", sql="SELECT COUNT(*) FROM `eval.okta.system_log`")
    assert "not in the catalogue" in other["error"]
    sample = await call(tools, "query_logs", sql="SELECT 1 FROM `socbot-sample.logs.auth_logs`")
    assert "error" in sample
    runbooks = await call(tools, "list_runbooks")
    assert not runbooks.get("runbooks"), runbooks  # the configured runbooks are left out


async def test_intel_answers_from_the_recording_only(tools: ToolRegistry) -> None:
    known = await call(tools, "lookup_ip", ip="185.220.101[.]42")
    assert known["flagged_by"] == ["abuseipdb"]
    assert known["services"]["abuseipdb"]["is_tor"] is True
    unknown = await call(tools, "lookup_ip", ip="8.8.8.8")
    assert unknown["services"]["abuseipdb"] == {"found": False, "flagged": False}
    internal = await call(tools, "lookup_ip", ip="10.0.0.5")  # the egress gate still holds
    assert "error" in internal
