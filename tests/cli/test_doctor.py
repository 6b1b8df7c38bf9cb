"""``socbot doctor`` against the fakes at the network edge: the fake Gemini REST API
(respx, the real google-genai client), the fake Slack Web API (the real slack_sdk
client), BigQuery's REST API (``responses``, the real google-cloud-bigquery client),
real DuckDB files and a real SQLite database. One line per check; exit code = failures."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from pydantic import SecretStr
from typer.testing import CliRunner

from cli.doctor import local, remote
from cli.doctor.remote import manifest_scopes
from cli.main import app
from config.privacy_settings import PrivacySettings
from config.settings import LogSettings, Settings, TableSpec
from store.db.engine import Database
from tests.fakes.gemini_rest import GeminiREST
from tests.fakes.slack_api import FakeSlackAPI
from tests.tools.test_bigquery_logs import FakeBigQuery

ROOT = Path(__file__).resolve().parents[2]
GEMINI_ERRORS = ROOT / "tests" / "fixtures" / "gemini"
MAIN = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def slack() -> Iterator[FakeSlackAPI]:
    """The fake Slack Web API on a loop of its own (the command runs its own loop)."""
    fake = FakeSlackAPI()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(30)
    yield fake
    asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


def set_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, slack: FakeSlackAPI) -> str:
    """A complete set-up in ``tmp_path``: the sample settings, keys, Slack, a database."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "socbot.toml").write_text(
        (ROOT / "config" / "socbot.toml").read_text().replace("examples/", f"{ROOT}/examples/")
    )
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "GEMINI_API_KEY": "test-gemini-key-not-real",
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_APP_TOKEN": "xapp-test",
        "SOCBOT_SLACK_API_URL": slack.base_url,
        "SOCBOT_SLACK__ALERT_CHANNELS": '["C0ALERTS01"]',
        "ABUSEIPDB_API_KEY": "test-abuseipdb-key",
        "SOCBOT_DATABASE_URL": url,
    }.items():
        monkeypatch.setenv(name, value)
    return url


def migrate(url: str) -> None:
    async def create() -> None:
        db = Database(url)
        await db.create()
        await db.close()

    asyncio.run(create())


def lines(output: str) -> dict[str, str]:
    """Check name → its line."""
    return {line[2:].split(": ", 1)[0]: line for line in output.splitlines() if line[:1] in "✔✘·"}


def test_a_good_set_up_passes_every_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, router: respx.MockRouter, slack: FakeSlackAPI
) -> None:
    migrate(set_up(monkeypatch, tmp_path, slack))
    gemini = GeminiREST(router, text="O")
    slack.scopes = manifest_scopes()
    slack.set_handler("conversations.history", lambda _call: {"ok": True, "messages": []})

    result = CliRunner().invoke(app, ["doctor"])

    assert result.exit_code == 0, result.output
    checks = lines(result.stdout)
    assert all(not line.startswith("✘") for line in checks.values()), result.stdout
    [body] = gemini.generated
    assert body["generationConfig"]["maxOutputTokens"] == 1
    assert checks["gemini"].startswith("✔ gemini: gemini-2.5-flash answered a 1-token call (")
    assert "at list prices" in checks["gemini"]
    assert checks["slack auth.test"] == "✔ slack auth.test: bot socbot in socbot test"
    assert checks["slack scopes"].startswith("✔ slack scopes: all ")
    assert checks["slack channel C0ALERTS01"] == "✔ slack channel C0ALERTS01: socbot is a member"
    assert checks["slack mode"] == "✔ slack mode: socket mode (SLACK_APP_TOKEN)"
    duck = [line for name, line in checks.items() if name.startswith("duckdb ")]
    assert len(duck) == 4 and all(line.startswith("✔") for line in duck)
    assert checks["intel"].startswith("✔ intel: abuseipdb configured; not set: OTX_API_KEY")
    assert checks["privacy"] == "· privacy: off: personal data reaches the model as it is"
    assert (
        checks["database"].startswith("✔ database: sqlite+aiosqlite:///")
        and "revision" in (checks["database"])
    )
    assert result.stderr.strip() == "0 problems found"


def test_a_broken_set_up_says_each_failure_with_its_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, router: respx.MockRouter, slack: FakeSlackAPI
) -> None:
    set_up(monkeypatch, tmp_path, slack)
    (tmp_path / "socbot.db").write_bytes(b"")  # a database without the schema
    settings = (tmp_path / "config" / "socbot.toml").read_text()
    (tmp_path / "config" / "socbot.toml").write_text(
        settings.replace("dns_logs.parquet", "dns_logs_gone.parquet")
    )
    body = json.loads((GEMINI_ERRORS / "error_400_api_key.json").read_text())
    router.post(MAIN).mock(return_value=httpx.Response(400, json=body))
    slack.scopes = [s for s in manifest_scopes() if s != "reactions:write"]
    slack.set_handler(
        "conversations.history", lambda _call: {"ok": False, "error": "not_in_channel"}
    )

    result = CliRunner().invoke(app, ["doctor"])

    checks = lines(result.stdout)
    failed = {name: line for name, line in checks.items() if line.startswith("✘")}
    assert sorted(failed) == [
        "database",
        "duckdb socbot-sample.logs.dns_logs",
        "gemini",
        "slack channel C0ALERTS01",
        "slack scopes",
    ]
    assert result.exit_code == len(failed)
    assert (
        "rejected the API key" in failed["gemini"]
        and "fix: check GEMINI_API_KEY" in (failed["gemini"])
    )
    assert failed["slack scopes"].endswith(
        "the token lacks reactions:write — fix: update the app from slack-app-manifest.yaml "
        "and reinstall it"
    )
    assert failed["slack channel C0ALERTS01"].endswith("fix: /invite @socbot in C0ALERTS01")
    assert "fix: run `socbot db upgrade`" in failed["database"]
    assert "no file matches" in failed["duckdb socbot-sample.logs.dns_logs"]
    assert result.stderr.strip() == "5 problems found"


def test_wrong_slack_token_and_no_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, router: respx.MockRouter, slack: FakeSlackAPI
) -> None:
    set_up(monkeypatch, tmp_path, slack)
    monkeypatch.delenv("SLACK_APP_TOKEN")
    slack.set_handler("auth.test", lambda _call: {"ok": False, "error": "invalid_auth"})
    offline = CliRunner().invoke(app, ["doctor", "--offline"])  # nothing leaves the machine
    assert not {"gemini", "slack auth.test"} & set(lines(offline.stdout))
    assert slack.calls == [] and offline.exit_code == 0, offline.output
    GeminiREST(router)
    result = CliRunner().invoke(app, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert checks["slack auth.test"]["status"] == "fail"
    assert checks["slack auth.test"]["detail"] == "invalid_auth"
    assert checks["slack mode"]["status"] == "fail"


@pytest.fixture
def bigquery_api() -> Iterator[FakeBigQuery]:
    import responses

    fake = FakeBigQuery()
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        fake.install(mock)
        yield fake


def test_bigquery_dry_runs_each_catalogued_table(bigquery_api: FakeBigQuery) -> None:
    settings = Settings(
        logs={
            "backend": "bigquery",
            "bigquery_project": "test-proj",
            "tables": [
                {"name": "socbot-sample.logs.auth_logs", "description": "sign-ins"},
                {"name": "socbot-sample.logs.dns_logs", "description": "DNS"},
            ],
        }
    )
    client = bigquery.Client(project="test-proj", credentials=AnonymousCredentials())
    good = remote.bigquery_tables(settings, client)
    assert [c.status for c in good] == ["ok", "ok"]
    assert [b["configuration"]["query"]["query"] for b in bigquery_api.dry_runs] == [
        "SELECT * FROM `socbot-sample.logs.auth_logs`",
        "SELECT * FROM `socbot-sample.logs.dns_logs`",
    ]
    bigquery_api.dry_run_error = (403, "accessDenied", "Access Denied: Table socbot-sample")
    bad = remote.bigquery_tables(settings, client)
    assert [c.status for c in bad] == ["fail", "fail"]
    assert "Access Denied" in bad[0].detail and "dataViewer" in bad[0].fix


def test_the_privacy_check_says_what_is_pseudonymised_and_fails_without_a_key() -> None:
    on = PrivacySettings(enabled=True, ips="internal")
    tables = [TableSpec(name="a.b.c", description="d", personal=["user_name", "email"])]
    missing = local.privacy(Settings(privacy=on)).line()
    assert missing.startswith("✘ privacy: privacy.enabled is on but SOCBOT_PRIVACY_KEY is not set")
    key = SecretStr(base64.b64encode(bytes(32)).decode())
    good = Settings(privacy=on.model_copy(update={"key": key}), logs=LogSettings(tables=tables))
    assert local.privacy(good).line() == (
        "✔ privacy: pseudonymised for the model: emails, users, names, phones, ips (internal); "
        "2 marked columns"
    )
