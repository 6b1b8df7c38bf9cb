"""The terminal commands, end to end through typer with a scripted model at the edge."""

from __future__ import annotations

import asyncio
import io
import json
import re
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select
from typer.testing import CliRunner

import cli.terminal.chat
import cli.terminal.investigate
from cli.main import app
from cli.runtime import Runtime, open_runtime
from cli.terminal.progress import TerminalProgress
from config.settings import Settings
from core.events import (
    Concluded,
    Failed,
    PlanCreated,
    PlanUpdated,
    Reflected,
    StepFinished,
    StepStarted,
    ToolCalled,
)
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.schema import AlertRow
from tests.fakes.model import ScriptedModel, call_response, json_response, text_response

ALERTS = Path(__file__).resolve().parents[1] / "fixtures" / "alerts"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'var' / 'socbot.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # default config/socbot.toml is absent here
    return url


def use_model(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    """Route the commands' runtime to the scripted model instead of Gemini."""

    def scripted(settings: Settings, **_: object) -> AbstractAsyncContextManager[Runtime]:
        return open_runtime(settings, backend=model)

    monkeypatch.setattr(cli.terminal.investigate, "open_runtime", scripted)
    monkeypatch.setattr(cli.terminal.chat, "open_runtime", scripted)


def assert_one_line_error(output: str, *needles: str) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: ")
    assert "Traceback" not in output
    for needle in needles:
        assert needle in lines[0]


# ---------------------------------------------------------------- bad input


@pytest.mark.usefixtures("db_url")
@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "cannot read"),
        ("{not json", "not valid JSON (line 1"),
        ("[1, 2]", "must hold one JSON object"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
        ("{}", "holds a JSON object with nothing in it"),
        ('{"finding": {}, "ids": [], "note": null, "title": ""}', "with nothing in it"),
        ('{"blob": "' + "x" * 256 * 1024 + '"}', "larger than 262144 bytes, the alert size limit"),
    ],
)
def test_bad_alert_file_is_one_line_exit_2(
    runner: CliRunner, tmp_path: Path, content: str | bytes | None, needle: str
) -> None:
    path = tmp_path / "alert.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    result = runner.invoke(app, ["investigate", str(path)])
    assert result.exit_code == 2
    assert_one_line_error(result.output, needle)


@pytest.mark.usefixtures("db_url")
def test_bad_json_on_stdin(runner: CliRunner) -> None:
    result = runner.invoke(app, ["investigate", "-"], input="nope")
    assert result.exit_code == 2
    assert_one_line_error(result.output, "standard input", "not valid JSON")


@pytest.mark.usefixtures("db_url")
def test_alert_over_the_configured_limit_on_stdin(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOCBOT_SLACK__MAX_ALERT_BYTES", "2000")
    alert = (ALERTS / "leveret-scc.json").read_text()
    assert len(alert.encode()) > 2000
    result = runner.invoke(app, ["investigate", "-"], input=alert)
    assert result.exit_code == 2
    assert_one_line_error(result.output, "standard input", "larger than 2000 bytes")


def test_missing_api_key_names_the_variable(runner: CliRunner, db_url: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["investigate", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 2
    assert_one_line_error(result.output, "GEMINI_API_KEY")
    assert not (tmp_path / "var").exists(), "credentials are checked before the database opens"

    result = runner.invoke(app, ["chat"], input="hello\n")
    assert result.exit_code == 2
    assert_one_line_error(result.output, "GEMINI_API_KEY")


def test_broken_config_file_is_one_line(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOCBOT_CONFIG", str(tmp_path / "missing.toml"))
    result = runner.invoke(app, ["investigate", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 2
    assert_one_line_error(result.output, "SOCBOT_CONFIG")


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[limits]\nmax_steps = 0\n", "invalid setting limits.max_steps: Input should be greater"),
        ("x = = 1\n", "is not valid TOML"),
        ('databse_url = "x"\n', "unknown setting databse_url (did you mean database_url?)"),
    ],
)
def test_bad_config_is_one_line(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, needle: str
) -> None:
    path = tmp_path / "socbot.toml"
    path.write_text(toml)
    monkeypatch.setenv("SOCBOT_CONFIG", str(path))
    for command in (["investigate", str(ALERTS / "leveret-scc.json")], ["chat"]):
        result = runner.invoke(app, command, input="")
        assert result.exit_code == 2
        assert_one_line_error(result.output, needle)


@pytest.mark.parametrize(
    "url",
    [
        "notadb://x",
        "garbage",
        "sqlite+aiosqlite:///{tmp}",
        "sqlite+aiosqlite:///{tmp}/f/db",
        "sqlite+aiosqlite:///{tmp}/f",
    ],
)
def test_unusable_database_url_is_one_line(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f").write_text("a text file, not a database, where a folder should be" * 100)
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url.format(tmp=tmp_path))
    monkeypatch.setenv("GEMINI_API_KEY", "fake-key-for-tests")
    result = runner.invoke(app, ["investigate", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 2
    assert_one_line_error(result.output, "SOCBOT_DATABASE_URL")


# ---------------------------------------------------------------- progress sink


def _events() -> list[object]:
    plan = {
        "objective": "Decide whether the SSH brute force succeeded",
        "steps": [
            {"id": "s1", "description": "Query auth logs for the source IP", "status": "pending"},
            {"id": "s2", "description": "Look up the IP reputation", "status": "pending"},
        ],
    }
    done = {"id": "s1", "description": "Query auth logs for the source IP", "status": "done"}
    updated = {
        **plan,
        "steps": [done, plan["steps"][1], {"id": "s3", "description": "Check host"}],
    }
    return [
        PlanCreated(investigation_id="i", plan=plan),
        StepStarted(investigation_id="i", step_id="s1", description="Query auth logs"),
        ToolCalled(
            investigation_id="i",
            step_id="s1",
            tool="query_logs",
            args={"sql": "SELECT 1"},
            ok=True,
            duration_ms=42,
            result_chars=9000,
            truncated=True,
        ),
        StepFinished(investigation_id="i", step_id="s1", status="done", summary="3 failures"),
        Reflected(
            investigation_id="i",
            wave=1,
            reflection={"achieved": False, "insights": ["no success after failures"]},
        ),
        PlanUpdated(investigation_id="i", plan=updated, changes=["added s3: Check host"]),
        Concluded(investigation_id="i", conclusion={}, limits_hit=["max_waves"]),
        Failed(investigation_id="i", reason="never shown twice"),
    ]


async def test_progress_prints_plan_tools_and_reflections_line_by_line() -> None:
    out = io.StringIO()
    with TerminalProgress(Console(file=out, width=200, force_terminal=False)) as progress:
        for event in _events():
            await progress.emit(event)  # type: ignore[arg-type]
    text = out.getvalue()
    for needle in [
        "Objective: Decide whether the SSH brute force succeeded",
        "○ s1 Query auth logs for the source IP",
        "▶ s1",
        "query_logs(sql='SELECT 1') ok",
        "9000 chars, truncated",
        "✓ s1 3 failures",
        "reflection after wave 1",
        "no success after failures",
        "plan updated: added s3: Check host",
        "✓ s1 Query auth logs for the source IP  (1 tool call)",
        "○ s3 Check host",
        "limit reached: max_waves",
    ]:
        assert needle in text, needle


async def test_progress_live_checklist_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    with TerminalProgress(console) as progress:
        for event in _events()[:4]:
            await progress.emit(event)  # type: ignore[arg-type]
        assert progress.plan.steps["s1"].status == "done"
        assert progress.plan.steps["s1"].tool_calls == 1
    text = out.getvalue()
    assert "✓ s1" in text and "query_logs" in text


# ---------------------------------------------------------------- runtime


async def test_runtime_creates_schema_and_closes(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'db' / 'socbot.db'}"
    model = ScriptedModel({})
    async with open_runtime(Settings(database_url=url), backend=model) as rt:
        await rt.investigations.create("inv", "conv", "question", "hi")
        assert not rt.http.is_closed
        http = rt.http
    assert http.is_closed
    check = Database(url)
    try:
        assert (await InvestigationStore(check).get("inv")) is not None
    finally:
        await check.close()


# ---------------------------------------------------------------- end to end

CONCLUSION = {
    "verdict": "true_positive",
    "severity": "high",
    "confidence": "medium",
    "summary": "A Tor exit node signed in with valid credentials.",
    "key_findings": [
        {"finding": "Sign-in from a Tor exit", "evidence": "step s1", "evidence_refs": ["s1#1"]}
    ],
    "uncertainties": ["MFA logs were not checked"],
    "recommendations": ["Reset the user's credentials"],
}
CRITIQUE = {
    "score": 0.9,
    "criteria": {"answers_objective": 1.0, "grounded": 0.9, "consistent": 0.9, "actionable": 0.8},
    "issues": [],
}


def investigation_model() -> ScriptedModel:
    plan = {
        "objective": "Decide whether the SCC finding is a real intrusion",
        "steps": [
            {
                "id": "ip",
                "description": "Assess the source IP",
                "tools": ["search_past_alerts"],
                "expected": "reputation",
                "depends_on": [],
            },
            {
                "id": "impact",
                "description": "Assess the impact on the project",
                "tools": [],
                "expected": "what was touched",
                "depends_on": ["ip"],
            },
        ],
    }
    return ScriptedModel(
        {
            "planner": [json_response(plan)],
            "step s1": [
                call_response(("search_past_alerts", {"text": "Tor"})),
                text_response("The IP is a Tor exit node."),
            ],
            "step s2": [text_response("A service account key was created.")],
            "reflector": [
                json_response({"achieved": False, "insights": ["Tor exit"], "plan_updates": []}),
                json_response({"achieved": True, "insights": ["key created"], "plan_updates": []}),
            ],
            "concluder": [json_response(CONCLUSION)],
            "critic": [json_response(CRITIQUE)],
        }
    )


def test_investigate_json_end_to_end(
    runner: CliRunner, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = investigation_model()
    use_model(monkeypatch, model)
    result = runner.invoke(app, ["investigate", "--json", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    assert model.remaining() == {}

    record = json.loads(result.stdout)
    assert record["status"] == "concluded"
    assert record["mode"] == "planned"
    assert record["objective"] == "Decide whether the SCC finding is a real intrusion"
    assert [(s["id"], s["status"]) for s in record["steps"]] == [("s1", "done"), ("s2", "done")]
    assert "Tor exit node" in record["steps"][0]["findings"]
    assert [r["insights"] for r in record["reflections"]] == [["Tor exit"], ["key created"]]
    assert record["conclusion"]["verdict"] == "true_positive"
    review = record["review"]
    assert (review["status"], review["verified"], review["findings"]) == ("passed", 1, 1)
    assert (review["score"], review["rewrites"]) == (0.9, 0)
    assert review["criteria"] == CRITIQUE["criteria"]
    assert list(record).index("review") == list(record).index("conclusion") + 1
    usage = record["usage"]
    assert usage["llm_calls"] == 8
    assert usage["stages"]["critic"]["calls"] == 1
    assert set(usage["stages"]) >= {"planner", "reflector", "concluder"}
    assert usage["total_tokens"] > 0
    assert record["timings"]["total_ms"] > 0
    assert set(record["timings"]["steps_ms"]) == {"s1", "s2"}
    assert "Traceback" not in result.output

    # The trace and the history were stored in the configured database.
    investigation_id = record["investigation_id"]
    trace = asyncio.run(_trace(db_url, investigation_id))
    assert trace[0] == "started"
    assert {"plan_created", "step_started", "reflected", "concluded"} <= set(trace)
    assert trace.count("tool_called") == 1
    # The step saw the real tool's result (searched in the configured database) as data.
    responses = [
        part.function_response
        for content in model.requests_for("step s1")[-1].contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    assert [r.name for r in responses] == ["search_past_alerts"]
    assert "output" in (responses[0].response or {})

    # The alert is kept for later searches, with the verdict it got.
    alerts = asyncio.run(_alerts(db_url))
    assert [(a.source, a.verdict, a.investigation_id) for a in alerts] == [
        ("scc", "true_positive", investigation_id)
    ]


def test_investigate_prints_markdown_conclusion(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    use_model(monkeypatch, investigation_model())
    alert = (ALERTS / "leveret-scc.json").read_text()
    result = runner.invoke(app, ["investigate", "-"], input=alert)
    assert result.exit_code == 0, result.output
    assert "**Verdict:**" in result.stdout
    assert "Reset the user's credentials" in result.stdout
    review = "1 of 1 findings verified against tool results · critic score 0.90"
    assert f"**Review:** {review}" in result.stdout
    assert "Critic criteria: answers_objective 1.00, grounded 0.90" in result.stdout
    assert f"review: {review}" in result.stderr  # the progress line
    assert "▶ s1" not in result.stdout, "progress stays on stderr"
    assert "Assess the source IP" in result.stderr
    closing = next(line for line in result.stderr.splitlines() if "follow up with" in line)
    assert re.search(r"· ⏱ \d+ s · \d+ model calls · \$0\.\d{4} · follow up with", closing)


def test_chat_keeps_history_across_sessions(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    model = ScriptedModel(
        {
            "classifier": lambda _request: json_response(
                {"needs_plan": False, "reason": "a quick question"}
            ),
            "direct": [text_response("185.220.101.42 is a Tor exit node."), text_response("No.")],
        }
    )
    use_model(monkeypatch, model)
    first = runner.invoke(app, ["chat"], input="is 185.220.101.42 known bad?\n")
    assert first.exit_code == 0, first.output
    assert "185.220.101.42 is a Tor exit node." in first.stdout
    conversation_id = _conversation_id(first.stderr)

    second = runner.invoke(
        app, ["chat", "--conversation", conversation_id], input="anything else?\n/exit\n"
    )
    assert second.exit_code == 0, second.output
    assert "No." in second.stdout
    assert f"resuming conversation {conversation_id} (2 messages)" in second.stderr
    seen = "\n".join(
        part.text or ""
        for content in model.requests_for("direct")[-1].contents
        for part in content.parts or []
    )
    assert "is 185.220.101.42 known bad?" in seen
    assert "185.220.101.42 is a Tor exit node." in seen


def test_chat_unknown_conversation_is_one_line(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    use_model(monkeypatch, ScriptedModel({}))
    result = runner.invoke(app, ["chat", "--conversation", "nope"], input="")
    assert result.exit_code == 2
    assert "error: no conversation 'nope'" in result.output
    assert "Traceback" not in result.output


def _conversation_id(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("conversation "):
            return line.split()[1]
    raise AssertionError(f"no conversation id printed: {stderr!r}")


async def _alerts(url: str) -> list[AlertRow]:
    db = Database(url)
    try:
        async with db.session() as session:
            return list(await session.scalars(select(AlertRow)))
    finally:
        await db.close()


async def _trace(url: str, investigation_id: str) -> list[str]:
    db = Database(url)
    try:
        return [e["type"] for e in await InvestigationStore(db).trace(investigation_id)]
    finally:
        await db.close()


def test_quiet_prints_only_the_result(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    use_model(monkeypatch, investigation_model())
    result = runner.invoke(app, ["investigate", "-q", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    assert "**Verdict:**" in result.stdout
    assert result.stderr == ""


def test_follow_up_hint_resumes_the_investigations_conversation(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    monkeypatch.setenv("UV_RUN_RECURSION_DEPTH", "1")  # as under `uv run`, the README's way
    use_model(monkeypatch, investigation_model())
    result = runner.invoke(app, ["investigate", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    assert "warning: no settings file" in result.stderr  # the test runs outside the repository
    hint = result.stderr.strip().splitlines()[-1]
    command = hint.split("follow up with: ", 1)[1]
    assert command.startswith("uv run socbot chat --conversation cli:")
    conversation = command.split()[-1]
    assert len(conversation) == len("cli:") + 12
    use_model(monkeypatch, ScriptedModel({}))
    resumed = runner.invoke(app, ["chat", "--conversation", conversation], input="")
    assert resumed.exit_code == 0, resumed.output
    assert f"resuming conversation {conversation}" in resumed.stderr
