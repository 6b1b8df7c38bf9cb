"""The assistant pane through the real engine, runtime and bolt app; Gemini and Slack faked.

An alert is investigated in the webhook channel's thread; then a person opens socbot's pane
beside that channel (``assistant_thread_started``, Slack's documented shape — invented
ids), gets a greeting and suggested prompts, and asks in the pane's DM thread
(``message.im``). A member of the channel gets answers about that alert (its thread's
history reaches the model); someone who is not gets nothing of it. A conclusion in the
pane carries Slack's feedback element, whose 👎 records the vote and opens today's dialog.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.events.pane import NOT_YOURS
from config.settings import Settings
from core.scope import EVERYTHING
from store.cases.opening import open_for_run
from store.playbook.feedback import FeedbackStore
from store.triage.alerts import AlertStore
from tests.bot.scenarios.test_slack_flows import (
    ALERTS,
    CONCLUSION,
    PLAN,
    alert_model,
    running_bot,
    thread_posts,
)
from tests.fakes.model import ScriptedModel, json_response, text_response
from tests.fakes.slack_api import Call, FakeSlackAPI
from tests.fakes.slack_assistant import accepted
from tests.slack_support import WEBHOOK_CHANNEL, WEBHOOK_TOKEN, SlackHarness, load, make_settings

ME, STRANGER = "UANALYST1", "USTRANGE1"
PANE = "DPANE0001"
PANE_TS = "1700000300.000300"
BROUGHT = "web-server-prod-01 runs a miner"  # the alert thread's conclusion
ANSWER = "The miner was confirmed; isolate web-server-prod-01."


def started(user: str, context_channel: str, event_id: str = "EvPANE0001") -> dict[str, Any]:
    """``assistant_thread_started`` as Slack documents it (docs.slack.dev/reference/events)."""
    return {
        "token": "fake-verification-token",
        "team_id": "T0TEST01",
        "api_app_id": "A0SOCBOT01",
        "event": {
            "type": "assistant_thread_started",
            "assistant_thread": {
                "user_id": user,
                "context": {"channel_id": context_channel, "team_id": "T0TEST01"},
                "channel_id": PANE,
                "thread_ts": PANE_TS,
            },
            "event_ts": "1700000300.000301",
        },
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000300,
    }


def asked(user: str, text: str, ts: str, event_id: str) -> dict[str, Any]:
    """A ``message.im`` in the pane's thread (from the recorded thread reply)."""
    payload = load("message_thread_reply.json")
    payload["event"].update(
        user=user,
        text=text,
        ts=ts,
        event_ts=ts,
        channel=PANE,
        channel_type="im",
        thread_ts=PANE_TS,
        blocks=[],
    )
    payload["event_id"] = event_id
    return payload


def model_script(*, pane_plans: bool = False) -> dict[str, Any]:
    script = alert_model()
    if pane_plans:  # the pane's question is investigated with a plan: a second conclusion
        for stage, answers in alert_model().items():
            script[stage] = script[stage] + answers
        script["classifier"] = [json_response({"needs_plan": True, "reason": "investigate"})]
    else:
        script["classifier"] = [json_response({"needs_plan": False, "reason": "a question"})]
        script["direct"] = [text_response(ANSWER)]
    return script


async def investigated_alert(h: SlackHarness) -> str:
    """The webhook alert investigated to its conclusion; its card's ts."""
    response = await h.client.post(
        "/alerts?source=scc",
        data=(ALERTS / "leveret-scc.json").read_text(),
        headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
    )
    assert response.status == 202
    await h.settle()
    card = h.fake.calls_to("chat.postMessage")[0]
    assert card.args["channel"] == WEBHOOK_CHANNEL
    return str(card.args.get("ts") or h.fake.messages[0].ts)


def pane_calls(fake: FakeSlackAPI, method: str) -> list[Call]:
    return [c for c in accepted(fake, method) if c.args.get("channel_id") == PANE]


def model_saw(model: ScriptedModel, stage: str) -> str:
    return "\n".join(
        part.text or ""
        for content in model.requests_for(stage)[-1].contents
        for part in content.parts or []
    )


def settings_for(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    return make_settings(tmp_path, fake.base_url)


async def test_the_pane_beside_an_alert_channel_knows_the_alert(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(WEBHOOK_CHANNEL, [ME])
    model = ScriptedModel(model_script())
    async with running_bot(fake, settings_for(tmp_path, fake), model) as h:
        await investigated_alert(h)
        stored = (await AlertStore(h.db).search(scope=EVERYTHING, limit=1))[0]
        case = await open_for_run(h.db, str(stored.investigation_id))
        assert case is not None

        assert (await h.event(started(ME, WEBHOOK_CHANNEL)))[0] == 200
        assert (await h.event(started(ME, WEBHOOK_CHANNEL)))[0] == 200  # a retry: once
        await h.settle()

        greeting = thread_posts(fake, PANE, PANE_TS)
        assert len(greeting) == 1
        assert greeting[0].args["metadata"]["event_payload"]["channel_id"] == WEBHOOK_CHANNEL
        [offered] = pane_calls(fake, "assistant.threads.setSuggestedPrompts")
        assert [p["message"] for p in offered.args["prompts"]] == [
            "What did you conclude about this alert, and why?",
            f"Where does case #{case.id} stand, and what is left to do?",
            "Is 185.220.101.42 known bad?",
            "What did we conclude about pool.minexmr.com this week?",
        ]

        question = asked(ME, offered.args["prompts"][0]["message"], "1700000400.000400", "EvQ1")
        assert (await h.event(question))[0] == 200
        await h.settle()

        answer = thread_posts(fake, PANE, PANE_TS)[-1]
        assert ANSWER in answer.args["text"]
        seen = model_saw(model, "direct")
        assert BROUGHT in seen and "What did you conclude about this alert" in seen
        [title] = pane_calls(fake, "assistant.threads.setTitle")
        assert title.args["title"] == PLAN["objective"]
        assert pane_calls(fake, "assistant.threads.setStatus")  # while it worked

        # a follow-up: the alert's history is in the pane's conversation once, not twice
        follow = asked(ME, "and what first?", "1700000500.000500", "EvQ2")
        model.queues["classifier"].append(json_response({"needs_plan": False, "reason": "q"}))
        model.queues["direct"].append(text_response("Isolate it first."))
        assert (await h.event(follow))[0] == 200
        await h.settle()
        assert model_saw(model, "direct").count(CONCLUSION["summary"]) == 1
        assert "Isolate it first." in thread_posts(fake, PANE, PANE_TS)[-1].args["text"]


async def test_the_pane_shows_nothing_of_a_channel_the_person_is_not_in(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(WEBHOOK_CHANNEL, [ME])  # the stranger is not a member
    model = ScriptedModel(model_script())
    async with running_bot(fake, settings_for(tmp_path, fake), model) as h:
        await investigated_alert(h)
        stored = (await AlertStore(h.db).search(scope=EVERYTHING, limit=1))[0]
        case = await open_for_run(h.db, str(stored.investigation_id))
        assert case is not None

        assert (await h.event(started(STRANGER, WEBHOOK_CHANNEL)))[0] == 200
        await h.settle()
        [offered] = pane_calls(fake, "assistant.threads.setSuggestedPrompts")
        text = json.dumps(offered.args["prompts"])
        assert "185.220.101.42" not in text and f"#{case.id}" not in text
        assert "this alert" not in text
        assert offered.args["prompts"] == [
            {"title": "What can you do?", "message": "What can you help me with?"}
        ]

        question = f"what did you conclude in case #{case.id}?"
        assert (await h.event(asked(STRANGER, question, "1700000400.000400", "EvQ1")))[0] == 200
        await h.settle()
        told = [c for c in fake.calls_to("chat.postEphemeral") if c.args["user"] == STRANGER]
        assert [c.args["text"] for c in told] == [NOT_YOURS]
        seen = model_saw(model, "direct")
        assert BROUGHT not in seen and "185.220.101.42" not in seen
        [title] = pane_calls(fake, "assistant.threads.setTitle")
        assert title.args["title"] == question  # not the alert's objective


async def test_a_verdict_in_the_pane_takes_slacks_feedback_element(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(WEBHOOK_CHANNEL, [ME])
    model = ScriptedModel(model_script(pane_plans=True))
    async with running_bot(fake, settings_for(tmp_path, fake), model) as h:
        await investigated_alert(h)
        assert (await h.event(started(ME, WEBHOOK_CHANNEL)))[0] == 200
        ask = asked(ME, "investigate this alert again", "1700000400.000400", "EvQ1")
        assert (await h.event(ask))[0] == 200
        await h.settle()

        verdict = next(
            c for c in thread_posts(fake, PANE, PANE_TS) if "context_actions" in json.dumps(c.args)
        )
        element = next(b for b in verdict.args["blocks"] if b["type"] == "context_actions")
        negative = element["elements"][0]["negative_button"]["value"]
        investigation_id = negative.partition(":")[2]

        click = load("block_actions_feedback.json")
        click["channel"]["id"] = click["container"]["channel_id"] = PANE
        posted = next(
            m
            for m in fake.messages
            if m.channel == PANE and "context_actions" in json.dumps(m.extra)
        )
        click["message"].update(ts=posted.ts, thread_ts=PANE_TS)
        click["container"]["thread_ts"] = PANE_TS
        click["actions"] = [
            {
                "type": "feedback_buttons",
                "action_id": element["elements"][0]["action_id"],
                "block_id": element["block_id"],
                "value": negative,
                "text": {"type": "plain_text", "text": "👎"},
                "action_ts": "1700000600.000600",
            }
        ]
        assert (await h.action(click))[0] == 200
        await h.settle()
        await fake.wait_for(lambda: bool(fake.calls_to("views.open")))
        assert fake.calls_to("views.open")[0].args["view"]["callback_id"] == "feedback_verdict"
        votes = await FeedbackStore(h.db).votes(investigation_id)
        assert [(v.user, v.value) for v in votes] == [(ME, "incorrect")]


async def test_a_refused_feedback_element_falls_back_to_the_buttons(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(WEBHOOK_CHANNEL, [ME])
    canned = fake._canned()["chat.postMessage"]

    def older_workspace(call: Call) -> dict[str, Any]:
        if "context_actions" in json.dumps(call.args.get("blocks") or []):
            return {"ok": False, "error": "invalid_blocks"}
        return canned(call)

    fake.set_handler("chat.postMessage", older_workspace)
    model = ScriptedModel(model_script(pane_plans=True))
    async with running_bot(fake, settings_for(tmp_path, fake), model) as h:
        await investigated_alert(h)
        assert (await h.event(started(ME, WEBHOOK_CHANNEL)))[0] == 200
        ask = asked(ME, "investigate this alert again", "1700000400.000400", "EvQ1")
        assert (await h.event(ask))[0] == 200
        await h.settle()

        posts = thread_posts(fake, PANE, PANE_TS)
        refused = [c for c in posts if "context_actions" in json.dumps(c.args)]
        assert len(refused) == 1  # tried once, then the buttons at once
        kept = [
            m
            for m in fake.messages
            if m.channel == PANE and "feedback_votes" in json.dumps(m.extra)
        ]
        assert len(kept) == 1
        actions = [b for b in kept[0].extra["blocks"] if b.get("block_id") == "feedback_votes"]
        assert [e["action_id"] for e in actions[0]["elements"]] == [
            "feedback_correct",
            "feedback_incorrect",
        ]


async def test_pane_calls_slack_refuses_never_stop_the_answer(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    fake.add_members(WEBHOOK_CHANNEL, [ME])
    fake.fail_next("assistant.threads.setSuggestedPrompts", error="not_allowed_token_type")
    fake.fail_next("assistant.threads.setTitle", error="not_allowed_token_type")
    model = ScriptedModel(model_script())
    async with running_bot(fake, settings_for(tmp_path, fake), model) as h:
        await investigated_alert(h)
        assert (await h.event(started(ME, WEBHOOK_CHANNEL)))[0] == 200
        assert (await h.event(asked(ME, "what happened?", "1700000400.000400", "EvQ1")))[0] == 200
        await h.settle()
        assert ANSWER in thread_posts(fake, PANE, PANE_TS)[-1].args["text"]
        for method in ("assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle"):
            assert len(fake.calls_to(method)) == 1  # asked once, refused, carried on
