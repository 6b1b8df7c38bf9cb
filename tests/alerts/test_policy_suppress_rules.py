"""A suppress rule hides alerts, so it must say until when, why and whose it is: each of
``expires``, ``reason`` and ``owner`` is required on its own, and the refusal names it."""

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
