"""The review of conclusions and direct answers: code check, critic, one bounded rewrite.

Real engine, gateway, tools and SQLite; the scripted model answers the critic and
the rewrites. The tool ``lookup_ip`` returns ``{"ip": ..., "verdict": "malicious",
"tags": ["tor-exit"]}`` and ``query_logs`` one row ``{"user": "alice", "logins": 3}``.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from agent.engine import Request
from agent.errors import LLMUnavailable
from agent.model.gateway import CallContext
from agent.prompts import PROMPTS_DIR, Prompts
from agent.review.critic import Feedback, Review, Subject, review_markdown
from agent.review.grounding import CodeCheck
from agent.run import open_run
from alerts.parse import Alert
from config.settings import ReviewSettings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from tests.agent.test_engine import (
    Harness,
    classified,
    harness,
    plan,
    reflection,
    step,
    user_text,
)
from tests.fakes.model import Delayed, call_response, json_response, text_response

FINDINGS_S1 = "203.0.113.7 is a Tor exit node per threat intel [s1#1]; verdict malicious."
ON = ReviewSettings()


def finding(text: str, evidence: str, refs: list[str]) -> dict[str, Any]:
    return {"finding": text, "evidence": evidence, "evidence_refs": refs}


def conclusion(
    *findings: dict[str, Any], confidence: str = "medium"
) -> types.GenerateContentResponse:
    return json_response(
        {
            "verdict": "true_positive",
            "severity": "high",
            "confidence": confidence,
            "summary": "203.0.113.7, a Tor exit node, is behind the alert.",
            "key_findings": list(findings),
            "uncertainties": ["Auth logs were not checked"],
            "recommendations": ["Block 203.0.113.7 at the edge"],
        }
    )


GROUNDED = finding("203.0.113.7 is a Tor exit node", "lookup_ip: malicious, tor-exit", ["s1#1"])
INVENTED = finding("198.51.100.9 also logged in as alice", "auth logs", ["s1#1"])


def critique(score: float, *issues: str) -> types.GenerateContentResponse:
    return json_response(
        {
            "score": score,
            "criteria": {
                "answers_objective": score,
                "grounded": score,
                "consistent": score,
                "actionable": score,
            },
            "issues": list(issues),
        }
    )


def script(concluder: list[Any], critic: list[Any]) -> dict[str, Any]:
    return {
        "classifier": [classified(True)],
        "planner": [plan(step("s1", ["lookup_ip"]))],
        "step s1": [
            call_response(("lookup_ip", {"ip": "203.0.113.7"})),
            text_response(FINDINGS_S1),
        ],
        "reflector": [reflection(achieved=True)],
        "concluder": concluder,
        "critic": critic,
    }


def review_of(h: Harness, outcome: Any) -> Review:
    assert outcome.review is not None
    assert outcome.record["review"] == outcome.review.model_dump()
    review: Review = outcome.review
    return review


async def test_step_model_sees_each_result_with_its_reference(db: Database) -> None:
    h = harness(db, script([conclusion(GROUNDED)], [critique(0.9)]), review=ON)
    await h.run()
    second_turn = h.model.requests_for("step s1")[1]
    answer = second_turn.contents[-1].parts[0].function_response  # type: ignore[index]
    assert answer is not None and answer.response is not None
    assert answer.response["ref"] == "s1#1"
    assert "tor-exit" in answer.response["output"]
    assert "Cite the refs" in h.model.requests_for("step s1")[0].system
    concluder = user_text(h.model.requests_for("concluder")[0])
    assert "s1#1 lookup_ip(ip='203.0.113.7') → ok" in concluder
    tool_called = [e for e in h.sink.events if e.type == "tool_called"]
    assert [getattr(e, "ref", None) for e in tool_called] == ["s1#1"]


async def test_passing_draft_costs_one_light_call_and_is_not_rewritten(db: Database) -> None:
    h = harness(db, script([conclusion(GROUNDED)], [critique(0.9)]), review=ON)
    outcome = await h.run()

    review = review_of(h, outcome)
    assert (review.status, review.rewrites, review.verified, review.findings) == (
        "passed",
        0,
        1,
        1,
    )
    assert review.headline() == "1 of 1 findings verified against tool results · critic score 0.90"
    assert len(h.model.requests_for("concluder")) == 1
    (critic,) = h.model.requests_for("critic")
    assert critic.model == h.engine.settings.gemini.light_model
    assert critic.config.thinking_config is not None
    assert critic.config.thinking_config.thinking_budget == 0
    assert outcome.usage["stages"]["critic"]["calls"] == 1
    assert "concluder_rewrite" not in outcome.usage["stages"]
    # The critic sees objective, draft, code check and step findings; not the history.
    prompt = user_text(critic)
    assert "Decide whether 203.0.113.7 got in" in prompt and FINDINGS_S1 in prompt
    assert "Every quoted value was found" in prompt
    assert "Did 203.0.113.7 get in?" not in prompt
    assert h.model.remaining() == {}


async def test_invented_ip_is_flagged_and_rewritten(db: Database) -> None:
    h = harness(
        db,
        script(
            [conclusion(INVENTED, GROUNDED), conclusion(GROUNDED)],
            [critique(0.5, "key_findings[0] is not supported"), critique(0.9)],
        ),
        review=ON,
    )
    outcome = await h.run()

    review = review_of(h, outcome)
    assert (review.status, review.rewrites, review.kept) == ("rewritten", 1, 1)
    assert outcome.conclusion is not None
    assert [k.finding for k in outcome.conclusion.key_findings] == [GROUNDED["finding"]]
    first = review.drafts[0]["check"]["findings"][0]
    assert first["verified"] is False
    assert first["problems"] == [
        "ipv4 '198.51.100.9' does not appear in the cited tool results or the alert"
    ]
    # The rewrite is the concluder prompt plus the draft and both kinds of issues, fenced.
    rewrite = user_text(h.model.requests_for("concluder")[1])
    assert "## Review of your previous draft" in rewrite
    assert (
        "198.51.100.9' does not appear" in rewrite and "key_findings[0] is not supported" in rewrite
    )
    assert "previous draft" in rewrite.split("## Review of your previous draft")[1]
    assert outcome.usage["stages"]["concluder_rewrite"]["calls"] == 1
    assert outcome.usage["stages"]["critic"]["calls"] == 2
    # The critic of the first draft saw the code check's finding.
    assert "198.51.100.9" in user_text(h.model.requests_for("critic")[0])


async def test_history_and_trace(db: Database) -> None:
    h = harness(
        db,
        script(
            [conclusion(INVENTED), conclusion(GROUNDED)],
            [critique(0.4, "unsupported IP"), critique(0.85)],
        ),
        review=ON,
    )
    outcome = await h.run()

    messages = await h.engine.history.messages("c1")
    assert [m.role for m in messages] == ["user", "model"]
    assert "203.0.113.7 is a Tor exit node" in messages[1].content
    assert "198.51.100.9" not in messages[1].content  # only the final conclusion
    trace = await InvestigationStore(db).trace(outcome.investigation_id)
    (reviewed,) = [t for t in trace if t["type"] == "reviewed"]
    drafts = reviewed["payload"]["review"]["drafts"]
    assert len(drafts) == 2 and "198.51.100.9" in drafts[0]["draft"]
    assert [d["critique"]["score"] for d in drafts] == [0.4, 0.85]
    types_seen = [t["type"] for t in trace]
    assert types_seen.index("reviewed") < types_seen.index("concluded")


async def test_nonexistent_reference_is_flagged(db: Database) -> None:
    ghost = finding("203.0.113.7 is a Tor exit node", "intel", ["s7#2"])
    h = harness(
        db,
        script([conclusion(ghost)], [critique(0.9)]),
        review=ReviewSettings(max_rewrites=0),
    )
    outcome = await h.run()

    review = review_of(h, outcome)
    assert review.status == "kept"  # nothing better to keep: no rewrite allowed
    assert (review.verified, review.findings) == (0, 1)
    assert review.unverified[0].problems == [
        "cites 's7#2', which is not a tool call of this investigation"
    ]
    assert len(h.model.requests_for("concluder")) == 1
    assert review_markdown(review).splitlines() == [
        "**Review:** 0 of 1 findings verified against tool results · critic score 0.90",
        "Critic criteria: answers_objective 0.90, grounded 0.90, consistent 0.90, actionable 0.90",
        "- ⚠️ key finding 1: cites 's7#2', which is not a tool call of this investigation",
    ]


async def test_citing_a_failed_call_or_nothing_is_flagged(db: Database) -> None:
    failed = finding("flaky intel says 203.0.113.7 is bad", "flaky_intel", ["s1#2"])
    bare = finding("203.0.113.7 is a Tor exit node", "intel", [])
    h = harness(
        db,
        {
            **script([conclusion(failed, bare)], [critique(0.9)]),
            "planner": [plan(step("s1", ["lookup_ip", "flaky_intel"]))],
            "step s1": [
                call_response(
                    ("lookup_ip", {"ip": "203.0.113.7"}), ("flaky_intel", {"ip": "203.0.113.7"})
                ),
                text_response(FINDINGS_S1),
            ],
        },
        review=ReviewSettings(max_rewrites=0),
    )
    outcome = await h.run()

    problems = [f.problems for f in review_of(h, outcome).unverified]
    assert problems == [
        ["cites 's1#2', which returned an error, not a result"],
        ["cites no evidence reference"],
    ]


async def test_critic_failure_keeps_the_conclusion(db: Database) -> None:
    h = harness(
        db,
        script([conclusion(INVENTED)], [LLMUnavailable("Gemini is unavailable.")]),
        review=ON,
    )
    outcome = await h.run()

    assert outcome.status == "concluded" and outcome.conclusion is not None
    assert outcome.conclusion.key_findings[0].finding == INVENTED["finding"]
    review = review_of(h, outcome)
    assert (review.status, review.note) == ("failed", "Gemini is unavailable.")
    assert (review.verified, review.findings) == (0, 1)  # the code check still shows
    assert len(h.model.requests_for("concluder")) == 1


async def test_rewrite_failure_keeps_the_first_draft(db: Database) -> None:
    h = harness(
        db,
        script(
            [conclusion(INVENTED), LLMUnavailable("Gemini is unavailable.")],
            [critique(0.3, "unsupported")],
        ),
        review=ON,
    )
    outcome = await h.run()
    review = review_of(h, outcome)
    assert (review.status, review.rewrites, review.score) == ("failed", 0, 0.3)
    assert outcome.conclusion is not None
    assert outcome.conclusion.key_findings[0].finding == INVENTED["finding"]


async def test_rewrite_cap_holds_and_the_better_draft_is_kept(db: Database) -> None:
    worse = conclusion(INVENTED, finding("203.0.113.99 too", "x", ["s1#1"]))
    h = harness(
        db,
        script(
            [conclusion(INVENTED), worse, conclusion(INVENTED)],
            [critique(0.5, "a"), critique(0.2, "b"), critique(0.6, "c")],
        ),
        review=ReviewSettings(max_rewrites=2),
    )
    outcome = await h.run()

    review = review_of(h, outcome)
    assert review.rewrites == 2
    assert len(h.model.requests_for("concluder")) == 3
    assert len(h.model.requests_for("critic")) == 3
    assert h.model.remaining() == {}
    # Drafts 0 and 2 check equally (one problem); 2 scores better: kept.
    assert (review.kept, review.score, review.status) == (2, 0.6, "rewritten")


async def test_low_score_alone_triggers_the_rewrite(db: Database) -> None:
    h = harness(
        db,
        script(
            [conclusion(GROUNDED), conclusion(GROUNDED, confidence="high")],
            [critique(0.5, "recommendations are vague"), critique(0.55)],
        ),
        review=ON,
    )
    outcome = await h.run()
    review = review_of(h, outcome)
    assert review.rewrites == 1 and review.kept == 1  # never a second rewrite at max 1
    assert len(h.model.requests_for("critic")) == 2


async def test_verdict_rules(db: Database) -> None:
    h = harness(
        db,
        {
            **script([conclusion(confidence="high")], [critique(0.9)]),
            "planner": [plan(step("s1", ["lookup_ip"]), step("s2", ["flaky_intel"]))],
            "step s2": [text_response("The step failed.")],
        },
        review=ReviewSettings(max_rewrites=0),
    )
    h.model.queues["step s2"] = [LLMUnavailable("down")]
    outcome = await h.run()
    review = review_of(h, outcome)
    assert review.verdict_problems == [
        "verdict true_positive with no key finding to support it",
        "confidence high although 1 of 2 steps failed; lower it",
    ]


async def test_review_can_be_limited_by_severity(db: Database) -> None:
    h = harness(
        db,
        {**script([conclusion(INVENTED)], [])},
        review=ReviewSettings(severities=["critical"]),
    )
    outcome = await h.run()
    review = review_of(h, outcome)
    assert (review.status, review.note) == ("skipped", "severity not among review.severities")
    assert h.model.requests_for("critic") == []


async def test_speculative_conclusion_is_reviewed_too(db: Database) -> None:
    h = harness(
        db,
        script([conclusion(INVENTED), conclusion(GROUNDED)], [critique(0.3), critique(0.9)]),
        review=ON,
        speculative_conclusion=True,
    )
    outcome = await h.run()
    assert outcome.record["speculative_conclusions"][0]["outcome"] == "used"
    assert review_of(h, outcome).status == "rewritten"


async def test_review_past_the_deadline_keeps_the_conclusion(db: Database) -> None:
    h = harness(
        db,
        script([conclusion(INVENTED)], [Delayed(critique(0.9), 30.0)]),
        review=ON,
        deadline_s=3.0,  # 0.6 s each for the conclusion and the review: ample when loaded
    )
    started = time.monotonic()
    outcome = await h.run()

    assert time.monotonic() - started < 10  # the review's call is held for 30 s
    assert outcome.status == "concluded" and outcome.conclusion is not None
    assert outcome.conclusion.key_findings[0].finding == INVENTED["finding"]
    review = review_of(h, outcome)
    assert review.status == "failed" and "deadline" in review.note


async def test_the_review_has_its_own_share_of_budget_and_deadline(db: Database) -> None:
    h = harness(db, script([conclusion(GROUNDED)], [critique(0.9)]), review=ON)
    run = await open_run(
        Request(conversation_id="c1", text="q"),
        h.sink,
        investigations=h.engine.investigations,
        registry=h.engine.registry,
        settings=h.engine.settings,
    )
    limits, review = h.engine.settings.limits, h.engine.settings.review
    assert run.review_ctx.token_budget == limits.token_budget
    assert run.final.token_budget == limits.token_budget - review.reserve_tokens
    assert run.work.token_budget == run.final.token_budget - limits.conclude_reserve_tokens
    assert run.final.deadline == pytest.approx(run.review_ctx.deadline - review.grace_s)


async def test_critic_prompt_has_per_source_overrides(db: Database, tmp_path: Path) -> None:
    root = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, root)
    (root / "guardduty").mkdir()
    (root / "guardduty" / "critic.j2").write_text(
        '{% extends "critic.j2" %}{% block system %}{{ super() }}\n'
        "GuardDuty: a finding type alone is not evidence.{% endblock %}"
    )
    found = script([conclusion(GROUNDED)], [critique(0.9)])
    del found["classifier"]
    h = harness(db, found, review=ON, prompts=Prompts(root))
    alert = Alert(id="a1", source="guardduty", title="Recon", severity="high", raw={})
    outcome = await h.run("Investigate this alert", alert=alert)
    assert review_of(h, outcome).status == "passed"
    (critic,) = h.model.requests_for("critic")
    assert critic.system.endswith("GuardDuty: a finding type alone is not evidence.")


async def test_a_crashing_check_keeps_the_draft(db: Database) -> None:
    h = harness(db, {}, review=ON)

    def broken(_draft: str) -> CodeCheck:
        raise RuntimeError("a bug in the check")

    async def never(_feedback: Feedback) -> str:
        raise AssertionError("no rewrite without a check")

    ctx = CallContext("inv", h.sink, 10_000, time.monotonic() + 5)
    subject = Subject[str](kind="answer", check=broken, show=str, rewrite=never)
    kept, review = await h.engine.reviewer.review(ctx, "the draft", subject)
    assert (kept, review.status, review.note) == ("the draft", "failed", "a bug in the check")
    assert h.model.requests == []


# ---------------------------------------------------------------- direct answers


def direct_script(answers: list[Any], critic: list[Any]) -> dict[str, Any]:
    return {
        "classifier": [classified(False)],
        "direct": [call_response(("lookup_ip", {"ip": "203.0.113.7"})), *answers],
        "critic": critic,
    }


async def test_direct_answer_with_an_unsupported_value_is_revised_once(db: Database) -> None:
    h = harness(
        db,
        direct_script(
            [
                text_response("203.0.113.7 is malicious; it also hit 198.51.100.23."),
                text_response("203.0.113.7 is malicious (tor-exit)."),
            ],
            [critique(0.4, "198.51.100.23 is not in the results")],
        ),
        review=ON,
    )
    outcome = await h.run("is 203.0.113.7 known bad?")

    assert outcome.answer == "203.0.113.7 is malicious (tor-exit)."
    review = review_of(h, outcome)
    assert (review.kind, review.status, review.rewrites) == ("answer", "rewritten", 1)
    revision = h.model.requests_for("direct")[-1]
    assert revision.tool_names == []  # revised from the results, without tools
    text = user_text(revision)
    assert "198.51.100.23' does not appear" in text and '"tags": ["tor-exit"]' in text
    assert outcome.usage["stages"]["direct_revision"]["calls"] == 1
    assert len(h.model.requests_for("critic")) == 1  # a revision is checked in code only
    messages = await h.engine.history.messages("c1")
    assert messages[-1].content == "203.0.113.7 is malicious (tor-exit)."


async def test_sufficient_direct_answer_is_kept(db: Database) -> None:
    h = harness(
        db,
        direct_script([text_response("203.0.113.7 is malicious (tor-exit).")], [critique(0.8)]),
        review=ON,
    )
    outcome = await h.run("is 203.0.113.7 known bad?")
    assert review_of(h, outcome).status == "passed"
    assert len(h.model.requests_for("direct")) == 2


async def test_direct_answer_without_tool_facts_is_not_reviewed(db: Database) -> None:
    h = harness(
        db,
        {"classifier": [classified(False)], "direct": [text_response("Hello! Ask me anything.")]},
        review=ON,
    )
    outcome = await h.run("hi")
    review = review_of(h, outcome)
    assert (review.status, review.note) == ("skipped", "the answer states no tool facts")
    assert h.model.requests_for("critic") == []
