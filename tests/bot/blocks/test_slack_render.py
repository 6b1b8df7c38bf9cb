"""Block Kit rendering: golden files for what is posted, and Slack's size limits.

Regenerate the golden files after an intended change with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/bot/blocks/test_slack_render.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.concluder import Conclusion, KeyFinding
from agent.planner import Plan, Step
from agent.review.critic import Review
from agent.review.grounding import FindingCheck
from alerts.parse import Alert, Indicator
from bot.blocks.cards import alert_card, moved_card
from bot.blocks.investigation import (
    answer_messages,
    cancelled_message,
    conclusion_messages,
    error_message,
    plan_message,
    queued_message,
    still_working_message,
)
from bot.blocks.kit import HEADER_CHARS, MAX_BLOCKS, SECTION_CHARS, split_text
from bot.blocks.stats import RunStats, duration, usd

GOLDEN = Path(__file__).parents[2] / "golden" / "slack"
INDICATORS = ["185.220.101.42", "update-check.lol", "i-0abc1234def567890"]


def assert_golden(name: str, data: Any) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from {path}"


def conclusion() -> Conclusion:
    return Conclusion(
        verdict="true_positive",
        severity="high",
        confidence="medium",
        summary=(
            "**Compromised host.** Instance `i-0abc1234def567890` made 1,482 outbound SSH "
            "connections to 185.220.101.42 (a Tor exit node) between 02:10 and 02:47 UTC, "
            "then fetched https://update-check.lol/stage2.sh. <!channel> should not fire."
        ),
        key_findings=[
            KeyFinding(
                finding="The destination IP is a known Tor exit node",
                evidence="threat_intel: 185.220.101.42 listed by 3 feeds, abuse score 100",
            ),
            KeyFinding(
                finding="A second-stage script was downloaded from update-check.lol",
                evidence=(
                    "```sql\nSELECT ts, url FROM proxy_logs WHERE host = 'update-check.lol'\n```\n"
                    "1 row: 2026-11-21T02:48:03Z https://update-check.lol/stage2.sh"
                ),
            ),
            KeyFinding(
                finding="No earlier alerts for this instance",
                evidence="past_alerts: 0 matches in 90 days",
            ),
        ],
        uncertainties=["Process-level telemetry for the instance was not available."],
        recommendations=[
            "Isolate `i-0abc1234def567890` and snapshot its disk.",
            "Block 185.220.101.42 and update-check.lol at the egress proxy.",
            "Rotate the credentials of the instance profile (ask <@U0ADMIN> first).",
        ],
    )


def plan() -> Plan:
    steps = [
        ("s1", "Look up 185.220.101.42 in threat intel", "done"),
        ("s2", "Count SSH connections from the instance in the last 24 h", "running"),
        ("s3", "Search proxy logs for update-check.lol", "pending"),
        ("s4", "Check for the same alert on other hosts", "failed"),
        ("s5", "Ask the owner about scheduled jobs", "cancelled"),
    ]
    return Plan(
        objective="Decide whether i-0abc1234def567890 talking to 185.220.101.42 is malicious.",
        steps=[
            Step(id=i, description=d, tools=["query_logs"], expected="rows", status=s)  # type: ignore[arg-type]
            for i, d, s in steps
        ],
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def assert_slack_safe(messages: list[dict[str, Any]]) -> None:
    """No control sequence, no live indicator, every Slack size limit held."""
    for message in messages:
        assert len(message["blocks"]) <= MAX_BLOCKS
        for text in _strings(message):
            assert "<" not in text
            assert ">" not in re.sub(r"(?m)^> ", "", text)
            assert not re.search(r"(?<![\w@])@(channel|here|everyone)\b", text)
            assert "185.220.101.42" not in text and "https://" not in text
            assert "update-check.lol" not in text
        for block in message["blocks"]:
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= HEADER_CHARS
            if block["type"] == "section" and "text" in block:
                assert len(block["text"]["text"]) <= SECTION_CHARS
                assert block["text"]["text"].count("```") % 2 == 0


def review() -> Review:
    """The review of ``conclusion()``: the past-alert finding cites a call that never ran."""
    return Review(
        status="kept",
        findings=3,
        verified=2,
        unverified=[
            FindingCheck(
                index=2,
                verified=False,
                refs=["s3#4"],
                problems=["cites 's3#4', which is not a tool call of this investigation"],
            )
        ],
        score=0.75,
        rewrites=1,
    )


STATS = RunStats(duration_s=83.4, model_calls=12, cost_usd=0.014642)


def test_conclusion_golden() -> None:
    messages = conclusion_messages(
        conclusion(),
        investigation_id="inv-7f3a",
        limits_hit=[],
        indicators=INDICATORS,
        review=review(),
        stats=STATS,
    )
    assert len(messages) == 1
    assert_slack_safe(messages)
    assert_golden("conclusion_true_positive", messages)


def test_conclusion_leads_with_verdict_and_ends_with_feedback_buttons() -> None:
    [message] = conclusion_messages(
        conclusion(), investigation_id="inv-7f3a", limits_hit=["token budget reached"]
    )
    header, *_, context, actions = message["blocks"]
    assert header["text"]["text"] == "🚨 True positive · high severity"
    assert message["text"].startswith("🚨 True positive · high severity: *Compromised host.*")
    assert "Stopped early: token budget reached" in context["elements"][0]["text"]
    assert [(b["action_id"], b["value"]) for b in actions["elements"]] == [
        ("feedback_correct", "inv-7f3a"),
        ("feedback_incorrect", "inv-7f3a"),
    ]


def test_review_marks_unverified_findings_and_counts_the_verified() -> None:
    [message] = conclusion_messages(
        conclusion(), investigation_id="inv-7f3a", limits_hit=[], review=review()
    )
    texts = [json.dumps(b, ensure_ascii=False) for b in message["blocks"]]
    [count] = [t for t in texts if "findings verified" in t]
    assert "⚠️ 2 of 3 findings verified against tool results" in count
    flagged = [t for t in texts if "Unverified" in t]
    assert len(flagged) == 1 and "No earlier alerts" in flagged[0]
    assert "cites 's3#4', which is not a tool call of this investigation" in flagged[0]

    passed = review().model_copy(update={"verified": 3, "unverified": [], "status": "passed"})
    [message] = conclusion_messages(
        conclusion(), investigation_id="inv-7f3a", limits_hit=[], review=passed
    )
    text = json.dumps(message["blocks"], ensure_ascii=False)
    assert "🔎 3 of 3 findings verified against tool results" in text and "Unverified" not in text
    skipped = Review(status="skipped", note="the review is turned off")
    [message] = conclusion_messages(
        conclusion(), investigation_id="inv-7f3a", limits_hit=[], review=skipped
    )
    assert "verified" not in json.dumps(message["blocks"])


def test_answer_review_names_values_not_found() -> None:
    flagged = Review(
        status="kept",
        kind="answer",
        findings=1,
        unverified=[
            FindingCheck(
                index=0,
                verified=False,
                problems=["ipv4 '198.51.100.23' does not appear in the cited tool results"],
            )
        ],
    )
    [message] = answer_messages("It is bad.", investigation_id="inv-1", review=flagged)
    text = json.dumps(message["blocks"], ensure_ascii=False)
    assert "1 quoted value not found in this answer's tool results" in text
    assert "⚠️ _Unverified:_ ipv4 '198.51.100[.]23'" in text  # defanged like every IP


def test_plan_and_notice_goldens() -> None:
    status = "🔄 Running step s2… · 🔧 Last tool: `query_logs` in step s2 (1.2 s)"
    rendered = {
        "plan": plan_message(
            plan(), status_line=status, investigation_id="inv-7f3a", indicators=INDICATORS
        ),
        "no_plan": plan_message(None, status_line="🤔 Thinking…", investigation_id="inv-7f3a"),
        "answer": answer_messages(
            "# Yes\n185.220.101.42 is a **Tor exit node** (see https://metrics.torproject.org).",
            investigation_id="inv-1",
            stats=RunStats(duration_s=4.2, model_calls=1, cost_usd=0.00021),
        ),
        "error": error_message("The language model is unavailable right now.\nTraceback: x"),
        "still_working": still_working_message(),
        "queued": queued_message(2),
        "cancelled": cancelled_message(),
    }
    assert_slack_safe([rendered["plan"], rendered["no_plan"], *rendered["answer"]])
    assert_golden("plan_and_notices", rendered)


def test_plan_checklist_icons() -> None:
    text = plan_message(plan(), status_line="x", investigation_id="i")["blocks"][1]["text"]["text"]
    lines = text.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["✅", "🔄", "⏳", "❌", "🚫"]
    assert lines[4].startswith("🚫 ~s5 ") and lines[4].endswith("~")
    assert lines[3].endswith("_failed_")


def test_alert_card_golden() -> None:
    alert = Alert(
        id="a1b2c3",
        source="guardduty",
        title="Backdoor:EC2/C&CActivity.B!DNS <!here> " + "x" * 200,
        severity="high",
        event_time=datetime(2026, 11, 21, 2, 10, tzinfo=UTC),
        indicators=[
            Indicator(kind="ipv4", value="185.220.101.42"),
            Indicator(kind="domain", value="update-check.lol"),
            Indicator(kind="url", value="https://update-check.lol/stage2.sh"),
        ],
        raw={},
    )
    card = alert_card(alert)
    assert_slack_safe([card])
    assert_golden("alert_card", card)


def test_long_summary_with_code_block_is_split_across_messages() -> None:
    code = "\n".join(f"{i:04d} 185.220.101.42 -> 10.0.0.{i % 250} port 22" for i in range(400))
    summary = (
        ("Analysis paragraph. " * 200) + "\n```\n" + code + "\n```\n" + "Closing words. " * 100
    )
    assert len(summary) > 20_000
    long = conclusion().model_copy(update={"summary": summary})
    messages = conclusion_messages(
        long, investigation_id="inv-long", limits_hit=[], indicators=INDICATORS
    )
    assert len(messages) > 1
    assert_slack_safe(messages)
    assert "actions" not in [b["type"] for m in messages[:-1] for b in m["blocks"]]
    assert messages[-1]["blocks"][-1]["type"] == "actions"
    assert messages[-1]["text"].endswith(f"(part {len(messages)} of {len(messages)})")
    posted = "\n".join(
        b["text"]["text"]
        for m in messages
        for b in m["blocks"]
        if b["type"] == "section" and "text" in b
    )
    for i in (0, 199, 399):  # every code line arrives, defanged, inside a code block
        assert f"{i:04d} 185.220.101[.]42 -&gt; 10.0.0[.]{i % 250} port 22" in posted


def test_many_findings_respect_the_block_limit() -> None:
    many = conclusion().model_copy(
        update={
            "key_findings": [KeyFinding(finding=f"finding {n}", evidence="e") for n in range(120)]
        }
    )
    messages = conclusion_messages(
        many, investigation_id="inv-many", limits_hit=[], indicators=INDICATORS
    )
    assert len(messages) == 3
    assert_slack_safe(messages)
    texts = [
        b["text"]["text"]
        for m in messages
        for b in m["blocks"]
        if b["type"] == "section" and "text" in b
    ]
    assert sum(t.startswith("• finding ") for t in texts) == 120


@pytest.mark.parametrize("limit", [50, 200, SECTION_CHARS])
def test_split_text_balances_fences_and_keeps_every_line(limit: int) -> None:
    text = (
        "intro &amp; more\n```\n"
        + "\n".join(f"row {n} &lt;x&gt;" for n in range(300))
        + "\n```\nend"
    )
    chunks = split_text(text, limit)
    assert all(len(c) <= limit and c.count("```") % 2 == 0 for c in chunks)
    assert all(not re.search(r"&[a-z]*$", c) for c in chunks)  # no entity cut in half
    rows = [line for c in chunks for line in c.splitlines() if line.startswith("row ")]
    assert rows == [f"row {n} &lt;x&gt;" for n in range(300)]


def test_split_text_cuts_an_overlong_line_at_a_space() -> None:
    chunks = split_text("word " * 2000)
    assert len(chunks) == 4
    assert all(len(c) <= SECTION_CHARS and not c.startswith("ord") for c in chunks)


def test_app_manifest_declares_what_socbot_uses() -> None:
    import yaml

    manifest = yaml.safe_load((Path(__file__).parents[3] / "slack-app-manifest.yaml").read_text())
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {
        "app_mentions:read",
        "channels:history",
        "groups:history",
        "im:history",
        "mpim:history",
        "chat:write",
        "reactions:write",
        "users:read",
        "usergroups:read",
        "channels:read",  # conversations.members: who decides on a case (docs/cases.md)
        "groups:read",
        "assistant:write",  # the assistant pane: prompts, titles, status (docs/slack.md)
    } == scopes
    settings = manifest["settings"]
    assert settings["event_subscriptions"]["bot_events"] == [
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "app_home_opened",  # App Home (docs/slack.md)
    ]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["features"]["assistant_view"]["assistant_description"]
    assert settings["socket_mode_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True
    assert "request_url" not in settings["event_subscriptions"]  # Socket Mode by default


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["```", "```sql", "word", "&amp;", "&lt;!here&gt;", "x" * 90, ""]),
        max_size=400,
    ).map("\n".join),
    st.integers(min_value=40, max_value=400),
)
def test_split_text_property(text: str, limit: int) -> None:
    chunks = split_text(text, limit)
    assert all(len(c) <= limit for c in chunks)
    assert all(c.count("```") % 2 == 0 for c in chunks)
    assert all(not re.search(r"&[a-z]*$", c) for c in chunks)
    # nothing is lost, added or reordered: only fences and line breaks come and go
    assert _content("".join(chunks)) == _content(text)


def _content(text: str) -> str:
    return re.sub(r"```(?:sql)?|\s", "", text)


@pytest.mark.parametrize(
    ("usage", "record", "text"),
    [
        (
            {"llm_calls": 12, "cost_usd": 0.014642, "unpriced_calls": 0},
            {"timings": {"total_ms": 83_400.0}},
            "⏱ 1 min 23 s · 12 model calls · $0.0146",
        ),
        (  # a model without a price: the cost is a floor
            {"llm_calls": 3, "cost_usd": 0.5, "unpriced_calls": 1},
            {"timings": {"total_ms": 4_000}},
            "⏱ 4 s · 3 model calls · ≥ $0.5000",
        ),
        (  # no call had a price, no timing recorded: unknown, never $0
            {"llm_calls": 1, "cost_usd": 0.0, "unpriced_calls": 1},
            {},
            "1 model call · cost unknown",
        ),
        ({"llm_calls": 40, "cost_usd": 2.345, "unpriced_calls": 0}, {}, "40 model calls · $2.35"),
    ],
)
def test_run_stats_footer(usage: dict[str, Any], record: dict[str, Any], text: str) -> None:
    assert RunStats.from_outcome(usage, record).text() == text


def test_duration_and_usd_formats() -> None:
    assert [duration(s) for s in (0.4, 59.6, 125, 3725)] == [
        "0 s",
        "1 min 00 s",
        "2 min 05 s",
        "1 h 02 min",
    ]
    assert [usd(x) for x in (0.00021, 0.9999, 1234.5)] == ["$0.0002", "$0.9999", "$1,234.50"]


MOVED_LINK = "https://acme.slack.com/archives/CWEBHOOK1/p1700000000000002"


@pytest.mark.parametrize(
    ("thread", "linked"),
    [
        (MOVED_LINK, True),
        (None, False),  # Slack gave no permalink: the live card's ts is shown
        ("http://acme.slack.com/archives/C1/p1", False),
        ("https://acme.slack.com/x|<!here>", False),
        ("https://acme.slack.com/x y", False),
    ],
)
def test_a_moved_card_points_to_the_live_thread_and_stays_escaped(
    thread: str | None, linked: bool
) -> None:
    alert = Alert(
        id="a1b2c3",
        source="guardduty",
        title="C&C <!here> to https://update-check.lol/stage2.sh " + "x" * 200,
        severity="high",
        indicators=[Indicator(kind="url", value="https://update-check.lol/stage2.sh")],
        raw={},
    )
    card = moved_card(alert, thread=thread, ts="1700000000.000002")
    text = json.dumps(card)
    assert (f"<{MOVED_LINK}|this alert's thread>" in text) is linked
    assert ("`1700000000.000002`" in text) is not linked
    assert_slack_safe([json.loads(text.replace(f"<{MOVED_LINK}|this alert's thread>", "it"))])
