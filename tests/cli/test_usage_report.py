"""``socbot usage``: tokens and cost per day, source, channel and stage from the database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from alerts.parse import Alert, Indicator
from cli.main import app
from core.usage import Usage
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.investigations.usage import UsageStore, summarise
from store.schema import Investigation
from store.triage.alerts import AlertStore
from tests.cli.test_list_cmd import stored_database


def usage_of(*calls: tuple[str, int, int, int, float | None]) -> dict[str, object]:
    """``Usage.as_dict`` of calls (stage, prompt, cached, output, cost)."""
    usage = Usage()
    for stage, prompt, cached, output, cost in calls:
        usage.add(
            stage,
            prompt_tokens=prompt,
            cached_tokens=cached,
            output_tokens=output,
            thinking_tokens=10,
            cost_usd=cost,
        )
    return usage.as_dict()


async def store_runs(db: Database) -> None:
    investigations = InvestigationStore(db)
    runs = [
        # id, conversation, kind, created, usage
        (
            "inv-alert",
            "slack:C0ALERTS:1700000000.000100",
            "alert",
            datetime(2026, 11, 21, 9, 0, tzinfo=UTC),
            usage_of(
                ("planner", 4000, 2464, 300, 0.0020),
                ("step s1", 3000, 2048, 100, 0.0010),
                ("step s2", 3500, 3000, 100, 0.0008),
                ("concluder", 2500, 0, 400, 0.0017),
            ),
        ),
        (
            "inv-question",
            "slack:C0CHAT:1700000100.000100",
            "question",
            datetime(2026, 11, 22, 10, 0, tzinfo=UTC),
            usage_of(("classifier", 600, 0, 20, 0.0001), ("direct", 2000, 0, 200, 0.0011)),
        ),
        (
            "inv-terminal",
            "cli:abc123",
            "question",
            datetime(2026, 11, 22, 11, 0, tzinfo=UTC),
            usage_of(("direct", 1000, 0, 50, None)),  # a model without a price
        ),
        ("inv-old", "cli:old", "question", datetime(2026, 10, 1, tzinfo=UTC), usage_of()),
    ]
    for inv_id, conversation, kind, created, usage in runs:
        await investigations.create(inv_id, conversation, kind, "x")
        await investigations.finish(
            inv_id,
            status="concluded",
            mode="planned",
            objective=None,
            verdict=None,
            record={},
            usage=usage,
            error=None,
        )
        async with db.session() as session:
            await session.execute(
                update(Investigation).where(Investigation.id == inv_id).values(created_at=created)
            )
    alert = Alert(
        id="gd-1",
        source="guardduty",
        title="Recon:EC2/PortProbeUnprotectedPort",
        indicators=[Indicator(kind="ipv4", value="198.51.100.7")],
        raw={},
    )
    await AlertStore(db).save(alert, investigation_id="inv-alert")


async def test_usage_is_summed_per_day_source_channel_and_stage(db: Database) -> None:
    await store_runs(db)
    rows = await UsageStore(db).rows(datetime(2026, 11, 1, tzinfo=UTC))
    assert [r.investigation_id for r in rows] == ["inv-alert", "inv-question", "inv-terminal"]

    by_day = {k: v.as_dict() for k, v in summarise(rows, "day").items()}
    assert by_day["2026-11-21"]["cost_usd"] == pytest.approx(0.0055)
    assert by_day["2026-11-22"]["investigations"] == 2
    assert by_day["2026-11-22"]["calls"] == 3
    assert by_day["2026-11-22"]["unpriced_calls"] == 1

    by_source = summarise(rows, "source")
    assert set(by_source) == {"guardduty", "question"}
    assert by_source["guardduty"].usage.cached_tokens == 2464 + 2048 + 3000

    assert set(summarise(rows, "channel")) == {"C0ALERTS", "C0CHAT", "cli"}

    by_stage = summarise(rows, "stage")
    assert set(by_stage) == {"planner", "step", "concluder", "classifier", "direct"}
    assert (by_stage["step"].usage.calls, by_stage["step"].usage.prompt_tokens) == (2, 6500)
    assert by_stage["direct"].investigations == 2
    assert by_stage["step"].usage.cost_usd == pytest.approx(0.0018)


def test_socbot_usage_prints_tables_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored_database(tmp_path, monkeypatch, store_runs)
    days = (datetime.now(UTC) - datetime(2026, 11, 1, tzinfo=UTC)) // timedelta(days=1) + 1
    runner = CliRunner()

    result = runner.invoke(app, ["usage", "--days", str(days), "--by", "stage"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("3 investigations since ")
    assert lines[0].endswith(", $0.0067+")  # one call had no price: a floor
    assert lines[2].split() == [
        "stage",
        "runs",
        "calls",
        "prompt",
        "cached",
        "output",
        "thinking",
        "cost",
        "USD",
    ]
    step = next(line.split() for line in lines if line.startswith("step"))
    assert step == ["step", "1", "2", "6500", "5048", "200", "20", "0.0018"]
    direct = next(line.split() for line in lines if line.startswith("direct"))
    assert direct[-1] == "0.0011+"  # a call without a price: the cost is a floor

    result = runner.invoke(app, ["usage", "--days", str(days), "--json"])
    data = json.loads(result.output)
    assert data["investigations"] == 3
    assert set(data) == {
        "since",
        "investigations",
        "policy",
        "day",
        "source",
        "channel",
        "stage",
        "model",
    }
    assert set(data["model"]) == {"unknown"}  # stored before usage was split by model
    assert data["channel"]["C0ALERTS"]["cost_usd"] == pytest.approx(0.0055)

    result = runner.invoke(app, ["usage", "--by", "week"])
    assert (
        result.exit_code == 2 and "--by must be one of day, source, channel, stage" in result.output
    )
