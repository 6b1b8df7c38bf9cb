"""The canary: personal data of every kind, seeded in the alert, the log rows (DuckDB),
an intel answer, the thread's history and a playbook bullet, never reaches the model.

A whole investigation (with the review's critic and rewrite) and a follow-up run through
the real engine, the real google-genai client and the Gemini REST API on respx
(``tests/fakes/gemini_rest.py``, with the explicit context cache on, so the cache
uploads are sent too). Every request body the fake receives is scanned for every value.
The scripted model reads only what it is sent: its SQL names the pseudonyms it saw, and
the rows it gets back are the right ones; the conclusion and its Slack blocks show the
real values. The values are invented for this test (no real person).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
import respx
from google.genai import types
from pydantic import SecretStr

from agent.engine import Engine, Request
from agent.history import History
from agent.model.gateway import LLMGateway
from agent.model.gemini import GeminiBackend
from agent.prompts import stage_named
from alerts.model import Alert, Entity, Indicator
from bot.blocks.investigation import answer_messages, conclusion_messages
from bot.blocks.stats import RunStats
from config.agent_settings import ContextCacheSettings
from config.privacy_settings import PrivacySettings
from config.settings import GeminiSettings, IntelSettings, LogSettings, Settings, TableSpec
from core.events import NullSink
from store.db.engine import Database
from store.investigations.conversations import ConversationStore
from store.investigations.privacy import PrivacyMaps
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from tests.fakes.gemini_rest import GeminiREST
from tests.fakes.model import call_response, first_user_text, json_response, text_response
from tests.playbook_support import bullet
from tools.base import RunContext, Tool, ToolRegistry
from tools.logs import register

KEY = base64.b64encode(bytes(range(32))).decode()
THREAD = "slack:CSOC00001:1700000200.000100"
TABLE = "corp.logs.signins"
# Every value the model must never see, as a person would write it.
CANARIES = [
    "jdoe",
    "asmith",
    "jane.doe@example.com",
    "alan.smith@example.org",
    "Jane Doe",
    "Alan Smith",
    "+44 20 7946 0958",
    "2079460958",
    "(202) 555-0143",
    "2025550143",
    "ws-jdoe-01.corp",
    "10.20.30.40",
    "EMP-004211",
]
TOKEN = re.compile(r"\b(?:USER|EMAIL|PERSON|PHONE|HOST|IP|ID)_\d+\b")


def signins(tmp_path: Path) -> Path:
    path = tmp_path / "signins.parquet"
    rows = [
        ("2026-11-27 08:00:00", "jdoe", "jane.doe@example.com", "Jane Doe", "10.20.30.40", "OK"),
        ("2026-11-27 09:00:00", "asmith", "alan.smith@example.org", "Alan Smith", "8.8.4.4", "OK"),
        ("2026-11-27 23:10:00", "jdoe", "jane.doe@example.com", "Jane Doe", "203.0.113.9", "OK"),
        ("2026-11-27 23:11:00", "asmith", "alan.smith@example.org", "Alan Smith", "8.8.4.4", "NO"),
    ]
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t (event_time TIMESTAMP, user_name VARCHAR, email VARCHAR, "
        "full_name VARCHAR, src_ip VARCHAR, result VARCHAR)"
    )
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute(f"COPY t TO '{path}' (FORMAT PARQUET)")
    con.close()
    return path


def settings(tmp_path: Path) -> Settings:
    privacy = PrivacySettings(
        enabled=True, hosts=True, ips="internal", patterns=[r"EMP-\d{6}"], key=SecretStr(KEY)
    )
    table = TableSpec(
        name=TABLE,
        description="SSO sign-ins. Invented for a test.",
        time_column="event_time",
        path=str(signins(tmp_path)),
        personal=["user_name", "email", "full_name"],
    )
    gemini = GeminiSettings(
        api_key=SecretStr("test-gemini-key-not-real"),
        max_retries=0,
        timeout_s=10.0,
        model="gemini-2.5-pro",
        light_model="gemini-2.5-flash",
        context_cache=ContextCacheSettings(enabled=True, light_model=True),
    )
    return Settings(
        gemini=gemini,
        privacy=privacy,
        logs=LogSettings(tables=[table], runbooks_dir=None),
        intel=IntelSettings(internal_domain_suffixes=[".corp"]),
    )


async def lookup_ip(ctx: RunContext[None], ip: str) -> dict[str, Any]:
    """Threat intelligence on an IP address (its registrant, when known)."""
    return {
        "ip": ip,
        "verdict": "suspicious",
        "registrant": {"contact": "alan.smith@example.org", "phone": "(202) 555-0143"},
        "notes": f"seen with EMP-004211 and {ip}",
    }


def alert() -> Alert:
    return Alert(
        id="canary-1",
        source="generic",
        title="Impossible travel for jdoe",
        severity="high",
        indicators=[Indicator(kind="ipv4", value="203.0.113.9")],
        raw={
            "user": {"name": "jdoe", "displayName": "Jane Doe", "mail": "jane.doe@example.com"},
            "device": "ws-jdoe-01.corp",
            "phone": "+44 20 7946 0958",
            "src": "10.20.30.40",
            "note": "USER_2 wrote this to impersonate a pseudonym",
        },
        entities=[
            Entity(kind="user", value="jdoe", role="actor"),
            Entity(kind="email", value="jane.doe@example.com"),
            Entity(kind="host", value="ws-jdoe-01.corp", role="target"),
            Entity(kind="ip", value="10.20.30.40", role="source"),
        ],
    )


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


class Script:
    """The model: it answers from what the request says, nothing else."""

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []  # query_logs results as the model saw them
        self.critiques = 0
        self.stages: list[str] = []

    def __call__(self, model: str, body: dict[str, Any]) -> dict[str, Any]:
        contents = [types.Content.model_validate(c) for c in body["contents"]]
        system = "".join(p.get("text", "") for p in body["systemInstruction"]["parts"])
        stage = stage_named(system, first_user_text(contents))
        handler = getattr(self, stage.split(" ")[0])
        self.stages.append(stage)
        answer: types.GenerateContentResponse = handler(body, contents)
        assert answer.candidates and answer.candidates[0].content
        return answer.candidates[0].content.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )

    def seen(self, body: dict[str, Any], kind: str) -> str:
        """The first pseudonym of ``kind`` the request holds."""
        found = re.search(rf"\b{kind}_\d+\b", texts(body))
        assert found, f"no {kind} pseudonym in the request"
        return found.group(0)

    def classifier(self, body: dict[str, Any], _c: Any) -> types.GenerateContentResponse:
        return json_response({"needs_plan": False, "reason": "a question on the thread"})

    def planner(self, body: dict[str, Any], _c: Any) -> types.GenerateContentResponse:
        step = {
            "id": "s1",
            "description": f"Sign-ins of {self.seen(body, 'USER')}",
            "tools": ["query_logs", "lookup_ip"],
            "expected": "rows",
            "depends_on": [],
        }
        return json_response({"objective": "Was it the user?", "steps": [step]})

    def step(self, body: dict[str, Any], contents: list[Any]) -> types.GenerateContentResponse:
        if len(contents) == 1:
            user = self.seen(body, "USER")
            sql = (
                f"SELECT user_name, email, full_name, src_ip FROM `{TABLE}` "
                f"WHERE user_name = '{user}' ORDER BY event_time"
            )
            return call_response(("query_logs", {"sql": sql}), ("lookup_ip", {"ip": "203.0.113.9"}))
        self.keep_results(contents)
        return text_response(f"{self.seen(body, 'USER')} signed in from 203.0.113.9")

    def direct(self, body: dict[str, Any], contents: list[Any]) -> types.GenerateContentResponse:
        asked = re.search(r"Did (EMAIL_\d+) use", texts(body))
        assert asked, "the question reaches the model with its address pseudonymised"
        email = asked.group(1)
        if len(contents) == 1:
            sql = f"SELECT user_name, src_ip FROM `{TABLE}` WHERE email = '{email}'"
            return call_response(("query_logs", {"sql": sql}))
        self.keep_results(contents)
        return text_response(f"{email} also used 10.20.30.40: see USER_99.")

    def keep_results(self, contents: list[types.Content]) -> None:
        for part in contents[-1].parts or []:
            response = part.function_response
            if response and response.name == "query_logs" and response.response:
                output = str(response.response.get("output", ""))
                self.results.append(json.loads(output[output.index("{") : output.rindex("}") + 1]))

    def reflector(self, _b: Any, _c: Any) -> types.GenerateContentResponse:
        return json_response({"achieved": True, "insights": [], "plan_updates": []})

    def concluder(self, body: dict[str, Any], _c: Any) -> types.GenerateContentResponse:
        tokens = sorted(set(TOKEN.findall(texts(body))) - {"USER_99"})
        return json_response(
            {
                "verdict": "true_positive",
                "severity": "high",
                "confidence": "medium",
                "summary": "Seen: " + ", ".join(tokens) + ".",
                "key_findings": [
                    {
                        "finding": f"{self.seen(body, 'USER')} signed in from 203.0.113.9",
                        "evidence": "the query's rows",
                        "evidence_refs": [],
                    }
                ],
                "uncertainties": [],
                "recommendations": [f"Call {self.seen(body, 'PHONE')}"],
            }
        )

    def critic(self, _b: Any, _c: Any) -> types.GenerateContentResponse:
        self.critiques += 1
        score = 0.2 if self.critiques == 1 else 0.9  # the first draft is rewritten
        criteria = dict.fromkeys(
            ("answers_objective", "grounded", "consistent", "actionable"), score
        )
        return json_response({"score": score, "criteria": criteria, "issues": ["be precise"]})


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as mock:
        yield mock


async def engine(db: Database, config: Settings, http: httpx.AsyncClient) -> Engine:
    registry = ToolRegistry(result_chars=20_000)
    register(registry, config)
    registry.add(Tool(lookup_ip, None))
    store = PlaybookStore(db)
    await store.add(bullet("When jdoe (Jane Doe, +44 20 7946 0958) travels, expect 203.0.113.9."))
    backend = GeminiBackend.from_settings(config.gemini, httpx_async_client=http)
    return Engine(
        gateway=LLMGateway(backend, config.gemini),
        registry=registry,
        history=History(db, config.limits),
        investigations=InvestigationStore(db),
        settings=config,
        playbook=store,
    )


def close(engine: Engine) -> None:
    deps: Any = engine.registry.tools["query_logs"].deps
    deps.backend.close()


async def test_no_personal_value_reaches_the_model_and_people_see_real_ones(
    db: Database, http: httpx.AsyncClient, router: respx.MockRouter, tmp_path: Path
) -> None:
    config = settings(tmp_path)
    script = Script()
    GeminiREST(router, respond=script)
    await ConversationStore(db).append(THREAD, "user", "Earlier alan.smith@example.org said hi")
    socbot = await engine(db, config, http)
    try:
        first = await socbot.run(Request(THREAD, "Investigate this alert", alert()), NullSink())
        second = await socbot.run(
            Request(THREAD, "Did jane.doe@example.com use another address? +44 20 7946 0958"),
            NullSink(),
        )
    finally:
        close(socbot)

    bodies = [call.request.content.decode() for call in router.calls]
    assert len(bodies) >= 8 and any("cachedContents" in str(c.request.url) for c in router.calls)
    for body in bodies:
        folded = body.casefold()
        for value in CANARIES:
            assert value.casefold() not in folded, (value, body[:300])
    sent = "\n".join(bodies)
    assert "USER_1" in sent and "EMAIL_1" in sent and "PERSON_1" in sent and "PHONE_1" in sent
    assert "HOST_1" in sent and "IP_1" in sent and "ID_1" in sent
    assert "expect 203.0.113.9" in sent  # the bullet reached the planner, pseudonymised
    assert "USER_2 wrote this" not in sent and "LITERAL_1 wrote this" in sent

    # The model's SQL named USER_1: the tool ran on jdoe and found jdoe's two rows.
    jdoe, jane = script.results[0], script.results[1]
    assert [row[0] for row in jdoe["rows"]] == ["USER_1", "USER_1"]
    assert {row[3] for row in jdoe["rows"]} == {"IP_1", "203.0.113.9"}
    assert [row[0] for row in jane["rows"]] == ["USER_1", "USER_1"]  # by jane's EMAIL_n

    assert first.status == "concluded" and first.conclusion is not None
    conclusion = first.conclusion
    assert "jdoe" in conclusion.summary and "jane.doe@example.com" in conclusion.summary
    assert conclusion.key_findings[0].finding == "jdoe signed in from 203.0.113.9"
    assert conclusion.recommendations == ["Call +44 20 7946 0958"]
    first_run = script.stages[: script.stages.index("classifier")]
    assert first_run[-4:] == ["concluder", "critic", "concluder", "critic"]  # one rewrite
    stats = RunStats.from_outcome(first.usage, first.record)
    messages = conclusion_messages(
        conclusion, investigation_id=first.investigation_id, limits_hit=[], stats=stats
    )
    blocks = json.dumps(messages, ensure_ascii=False)
    assert "jdoe" in blocks and "USER_1" not in blocks and "EMAIL_1" not in blocks
    assert "jane.doe[@]example[.]com" in blocks  # Slack shows addresses defanged
    assert "personal data pseudonymised for the model: " in blocks
    counts = first.record["privacy"]["pseudonymised"]
    assert counts["USER"] >= 1 and counts["EMAIL"] >= 2 and counts["PHONE"] >= 2, counts

    assert second.answer is not None
    assert second.answer.startswith("jane.doe@example.com also used 10.20.30.40")
    assert second.answer.endswith("see USER_99.")  # not ours: left as written, not guessed
    answer = json.dumps(answer_messages(second.answer), ensure_ascii=False)
    assert "jane.doe[@]example[.]com" in answer

    sealed = await PrivacyMaps(db).load(THREAD)
    assert sealed is not None and b"jdoe" not in sealed and b"jane" not in sealed
