"""Every message, update, ephemeral and dialog socbot builds is one Slack would take.

Each payload of ``hostile_payloads`` (every builder, over hostile content) goes through
the Slack fake's own check (``tests.fakes.block_kit``: ``slack_sdk``'s models plus the
limits they do not check, stated there from Slack's reference); a planted violation of
each limit must be refused by that same check, so the check itself is tested. Through a
real ``AsyncWebClient`` the fake refuses on every method that carries blocks or a view.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import kit
from bot.blocks.investigation import answer_messages
from tests.bot.blocks import hostile_payloads as hostile
from tests.fakes import block_kit
from tests.fakes.slack_api import FakeSlackAPI

MESSAGES = list(hostile.messages())
VIEWS = list(hostile.views())


@pytest.mark.parametrize(("name", "payload"), MESSAGES, ids=[n for n, _ in MESSAGES])
def test_every_message_is_valid(name: str, payload: dict[str, Any]) -> None:
    assert block_kit.check_message(payload) is None, name


@pytest.mark.parametrize(("name", "view"), VIEWS, ids=[n for n, _ in VIEWS])
def test_every_dialog_is_valid(name: str, view: dict[str, Any]) -> None:
    assert block_kit.check_view(view) is None, name


def test_the_payloads_cover_every_builder_at_size() -> None:
    names = {n.split(" part")[0] for n, _ in MESSAGES}
    assert {"conclusion", "answer", "plan", "alert card", "storm over=True"} <= names
    assert len([n for n in names if n.startswith("ephemeral")]) >= 8
    assert sum(n.startswith("answer part") for n, _ in MESSAGES) >= 6  # 60,000 characters
    assert len(MESSAGES) + len(VIEWS) >= 60


def test_long_answer_parts_keep_a_margin_with_every_text_counted() -> None:
    """The near miss: parts carried 12,023 and 12,069 characters once the "continued"
    note and the footer were added after packing; each is now under the budget."""
    parts = answer_messages(hostile.ANSWER, investigation_id="a1b2", stats=hostile.STATS)
    assert len(parts) >= 6
    for part in parts:
        chars = block_kit.text_chars(part["blocks"])
        assert chars <= kit.MESSAGE_CHARS < block_kit.BLOCK_TEXT_CHARS
        assert kit.block_chars(part["blocks"]) == chars
    assert "continued" in json.dumps(parts[1]["blocks"][0])


def test_fences_in_tool_arguments_stay_inside_the_code_block() -> None:
    """The other near miss: a ``` in model-written arguments closed the block early."""
    ((_, payload),) = [(n, p) for n, p in MESSAGES if n == "approval request"]
    args = payload["blocks"][2]["text"]["text"]
    assert args.startswith("*Arguments:*\n```\n") and args.endswith("\n```")
    assert args.count("```") == 2 and "closed early" not in args
    assert "&lt;!channel&gt;" in args and "<!" not in args


def test_product_limits_are_within_slacks() -> None:
    """One place for each number product-side; the fake states Slack's own."""
    assert kit.SECTION_CHARS == 3000 and kit.HEADER_CHARS == 150
    assert kit.MAX_BLOCKS == block_kit.SURFACE_BLOCKS["message"]
    assert kit.VIEW_BLOCKS == block_kit.SURFACE_BLOCKS["modal"]
    assert kit.TEXT_CHARS == block_kit.TEXT_CHARS
    assert kit.STREAM_CHARS == block_kit.STREAM_CHARS
    assert kit.MESSAGE_CHARS + kit.NOTE_CHARS <= block_kit.BLOCK_TEXT_CHARS


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(text: str = "ok", value: str = "v", action: str = "a") -> dict[str, Any]:
    label = {"type": "plain_text", "text": text}
    return {"type": "button", "text": label, "value": value, "action_id": action}


def _select(text: str = "o", value: str = "v") -> dict[str, Any]:
    option = {"text": {"type": "plain_text", "text": text}, "value": value}
    element = {"type": "static_select", "action_id": "s", "options": [option]}
    return {"type": "input", "label": {"type": "plain_text", "text": "l"}, "element": element}


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}


PLANTED: dict[str, tuple[dict[str, Any], str]] = {
    "51 blocks": ({"text": "t", "blocks": [_section("x")] * 51}, "invalid_blocks"),
    "section 3,001": ({"text": "t", "blocks": [_section("x" * 3001)]}, "invalid_blocks"),
    "header 151": (
        {
            "text": "t",
            "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        },
        "invalid_blocks",
    ),
    "11 context elements": (
        {"text": "t", "blocks": [{"type": "context", "elements": [_mrkdwn("c")] * 11}]},
        "invalid_blocks",
    ),
    "26 actions": (
        {
            "text": "t",
            "blocks": [
                {"type": "actions", "elements": [_button(action=f"a{n}") for n in range(26)]}
            ],
        },
        "invalid_blocks",
    ),
    "button text 76": (
        {"text": "t", "blocks": [{"type": "actions", "elements": [_button("b" * 76)]}]},
        "invalid_blocks",
    ),
    "button value 2,001": (
        {"text": "t", "blocks": [{"type": "actions", "elements": [_button(value="v" * 2001)]}]},
        "invalid_blocks",
    ),
    "block_id 256": (
        {"text": "t", "blocks": [{"type": "divider", "block_id": "b" * 256}]},
        "invalid_blocks",
    ),
    "block_id twice": (
        {"text": "t", "blocks": [{"type": "divider", "block_id": "b"}] * 2},
        "invalid_blocks",
    ),
    "action_id twice": (
        {"text": "t", "blocks": [{"type": "actions", "elements": [_button(), _button()]}]},
        "invalid_blocks",
    ),
    "unknown block": ({"text": "t", "blocks": [{"type": "sectoin"}]}, "invalid_blocks"),
    "empty section": ({"text": "t", "blocks": [{"type": "section"}]}, "invalid_blocks"),
    "no text": ({"blocks": [_section("x")]}, "no_text"),
    "text 40,001": ({"text": "t" * 40_001}, "msg_too_long"),
    "blocks' text 11,001": (
        {"text": "t", "blocks": [_section("x" * 3000)] * 3 + [_section("x" * 2001)]},
        "msg_blocks_too_long",
    ),
}
PLANTED_VIEWS: dict[str, Callable[[dict[str, Any]], None]] = {
    "title 25": lambda v: v["title"].update(text="t" * 25),
    "submit 25": lambda v: v["submit"].update(text="s" * 25),
    "close 25": lambda v: v["close"].update(text="c" * 25),
    "no title": lambda v: v.pop("title"),
    "private_metadata 3,001": lambda v: v.update(private_metadata="m" * 3001),
    "callback_id 256": lambda v: v.update(callback_id="c" * 256),
    "101 blocks": lambda v: v.update(blocks=[{"type": "divider"}] * 101),
    "option text 76": lambda v: v["blocks"].append(_select(text="o" * 76)),
    "option value 151": lambda v: v["blocks"].append(_select(value="v" * 151)),
    "input without element": lambda v: v["blocks"].append({"type": "input", "label": _mrkdwn("l")}),
}


@pytest.mark.parametrize("name", PLANTED)
def test_a_planted_violation_is_refused(name: str) -> None:
    payload, error = PLANTED[name]
    refused = block_kit.check_message(payload)
    assert refused is not None and refused["error"] == error, name


@pytest.mark.parametrize("name", PLANTED_VIEWS)
def test_a_planted_dialog_violation_is_refused(name: str) -> None:
    view = copy.deepcopy(dict(VIEWS)["feedback dialog"])
    assert block_kit.check_view(view) is None
    PLANTED_VIEWS[name](view)
    refused = block_kit.check_view(view)
    assert refused is not None and refused["error"] == "invalid_arguments", name


def test_a_stream_chunk_over_12000_is_refused() -> None:
    assert block_kit.check_stream_chunk("m" * 12_000) is None
    refused = block_kit.check_stream_chunk("m" * 12_001)
    assert refused is not None and refused["error"] == "msg_too_long"


async def test_the_fake_refuses_on_every_method_with_blocks_or_a_view() -> None:
    too_long = [_section("x" * 3000)] * 4
    view = copy.deepcopy(dict(VIEWS)["feedback dialog"])
    view["title"]["text"] = "t" * 25
    home = {"type": "home", "blocks": [_section("x" * 3001)]}
    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        posted = await client.chat_postMessage(channel="C1", text="t", blocks=[_section("ok")])
        calls = [
            client.chat_postMessage(channel="C1", text="t", blocks=too_long),
            client.chat_update(channel="C1", ts=posted["ts"], text="t", blocks=too_long),
            client.chat_postEphemeral(channel="C1", user="U1", text="t", blocks=too_long),
            client.views_open(trigger_id="1.2.a", view=view),
            client.views_push(trigger_id="1.2.a", view=view),
            client.views_update(view_id="V1", view=view),
            client.views_publish(user_id="U1", view=home),
        ]
        errors = []
        for call in calls:
            with pytest.raises(SlackApiError) as refused:
                await call
            errors.append(refused.value.response["error"])
        assert await client.views_publish(user_id="U1", view={**home, "blocks": [_section("ok")]})
    assert errors == ["msg_blocks_too_long"] * 3 + ["invalid_arguments"] * 4
    assert fake.checked == 2
    assert len(fake.messages) == 1
