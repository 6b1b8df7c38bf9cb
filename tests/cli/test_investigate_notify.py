"""``socbot investigate`` queues the conclusion for the configured webhooks (sent by
``socbot serve``: tests/bot/notify/test_webhook_delivery.py); none are queued without webhooks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from store.schema import WorkRow
from tests.cli.test_cli import ALERTS, investigation_model, use_model


async def notify_rows(url: str) -> list[WorkRow]:
    db = Database(url)
    try:
        async with db.session() as session:
            return list(await session.scalars(select(WorkRow).where(WorkRow.kind == "notify")))
    finally:
        await db.close()


@pytest.mark.parametrize("configured", [True, False])
def test_a_conclusion_is_queued_for_the_webhooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: bool
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    config = tmp_path / "socbot.toml"
    hook = '[[notify.webhooks]]\nname = "cases"\nurl = "https://hooks.example.com/x"\n'
    config.write_text(hook + 'secret = "${HOOK_SECRET}"\n' if configured else "")
    monkeypatch.setenv("SOCBOT_CONFIG", str(config))
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    use_model(monkeypatch, investigation_model())
    alert = (ALERTS / "leveret-scc.json").read_text()
    result = CliRunner().invoke(app, ["investigate", "-q", "-"], input=alert)
    assert result.exit_code == 0, result.output
    rows = asyncio.run(notify_rows(url))
    if not configured:
        assert rows == []
        return
    [row] = rows
    payload = json.loads(row.request["text"])
    sent = json.loads(payload["body"])
    assert (payload["webhook"], sent["event"]) == ("cases", "concluded")
    assert sent["data"]["alert"]["source"] and sent["data"]["conclusion"]["verdict"]
