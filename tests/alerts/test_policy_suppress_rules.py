"""A suppress rule hides alerts, so it must say until when, why and whose it is: each of
``expires``, ``reason`` and ``owner`` is required on its own, and the refusal names it.
The other fields an action needs or refuses are refused in as many exact words."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alerts.policy.rules import Rule

COMPLETE: dict[str, Any] = {
    "id": "quiet-scanner",
    "action": "suppress",
    "expires": "2027-01-01T00:00:00Z",
    "reason": "the weekly vulnerability scan",
    "owner": "U0SECOPS",
}


@pytest.mark.parametrize(
    ("dropped", "says"),
    [
        (("expires",), "no expires"),
        (("reason",), "no reason"),
        (("owner",), "no owner"),
        (("expires", "owner"), "no expires, owner"),
        (("expires", "reason", "owner"), "no expires, reason, owner"),
    ],
)
def test_a_suppress_rule_without_one_field_is_refused_naming_it(
    dropped: tuple[str, ...], says: str
) -> None:
    body = {k: v for k, v in COMPLETE.items() if k not in dropped}
    with pytest.raises(ValidationError) as caught:
        Rule.model_validate(body)
    [error] = caught.value.errors()
    assert error["msg"] == f"Value error, a suppress rule needs expires, reason and owner: {says}"


@pytest.mark.parametrize("blank", ["reason", "owner"])
def test_a_blank_reason_or_owner_counts_as_none(blank: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Rule.model_validate(COMPLETE | {blank: ""})
    assert caught.value.errors()[0]["msg"].endswith(f"owner: no {blank}")


def test_a_suppress_rule_with_all_three_loads() -> None:
    rule = Rule.model_validate(COMPLETE)
    assert (rule.action, rule.reason, rule.owner) == ("suppress", COMPLETE["reason"], "U0SECOPS")
    assert rule.expires is not None and rule.expires.isoformat() == "2027-01-01T00:00:00+00:00"


@pytest.mark.parametrize("action", ["ignore", "investigate"])
def test_other_actions_need_none_of_them(action: str) -> None:
    assert Rule.model_validate({"id": "x", "action": action}).expires is None


QUIET = (
    "{} investigates nothing: severity, mode, model, budget and auto_resolve apply to route "
    "and investigate rules"
)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"action": "route"}, "a route rule needs channel (a Slack channel id)"),
        ({"action": "investigate", "channel": "C0ALERTS"}, "channel applies to route rules only"),
        (COMPLETE | {"channel": "C0ALERTS"}, "channel applies to route rules only"),
        ({"action": "ignore", "severity": "low"}, QUIET.format("ignore")),
        ({"action": "ignore", "mode": "direct"}, QUIET.format("ignore")),
        ({"action": "ignore", "model": "gemini-x"}, QUIET.format("ignore")),
        ({"action": "ignore", "budget": {"per": "hour", "usd": 1}}, QUIET.format("ignore")),
        ({"action": "ignore", "auto_resolve": True}, QUIET.format("ignore")),
        (COMPLETE | {"auto_resolve": {}}, QUIET.format("suppress")),
        (COMPLETE | {"severity": "low"}, QUIET.format("suppress")),
    ],
)
def test_fields_an_action_needs_or_refuses(body: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Rule.model_validate({"id": "x"} | body)
    [error] = caught.value.errors()
    assert error["msg"] == f"Value error, {says}"


@pytest.mark.parametrize(
    "body",
    [
        {"action": "route", "channel": "C0ALERTS", "severity": "low", "mode": "direct"},
        {"action": "investigate", "model": "gemini-x", "budget": {"per": "day", "usd": 2}},
    ],
)
def test_route_and_investigate_take_what_they_use(body: dict[str, Any]) -> None:
    assert Rule.model_validate({"id": "x"} | body).action == body["action"]
