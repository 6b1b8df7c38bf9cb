"""The App Home view stays valid Block Kit (slack_sdk's own validation) under hostile text."""

from __future__ import annotations

from slack_sdk.models.views import View

from bot.blocks.home import MAX_BLOCKS, HomeRow, home_view


def _rows(n: int, title: str = "x") -> list[HomeRow]:
    return [HomeRow(i, title, "high", f"inv-{i}", "malicious") for i in range(n)]


def test_home_view_valid_with_take_and_open() -> None:
    view = home_view(_rows(2), _rows(2), _rows(1), web_url="https://socbot.example/")
    View(**view).validate_json()
    takes = [
        b["accessory"]["value"]
        for b in view["blocks"]
        if b.get("accessory", {}).get("action_id") == "case_take"
    ]
    assert takes == ["inv-0", "inv-1"]
    assert "https://socbot.example/cases/0" in str(view)


def test_home_view_without_web_url_has_no_open_and_hostile_text_is_escaped_and_cut() -> None:
    view = home_view(_rows(40, "<!channel> " + "a" * 5000), _rows(40), _rows(40))
    View(**view).validate_json()
    assert len(view["blocks"]) <= MAX_BLOCKS
    assert "socbot.example" not in str(view) and "<!channel>" not in str(view)
    assert len({b["block_id"] for b in view["blocks"]}) == len(view["blocks"])


def test_empty_home_says_nothing_here() -> None:
    view = home_view([], [], [])
    View(**view).validate_json()
    assert str(view).count("Nothing here.") == 3


def test_the_fake_refuses_a_home_view_slack_refuses() -> None:
    from tests.fakes.block_kit import check_view

    assert check_view(home_view([], [], [])) is None
    assert check_view({"type": "home", "blocks": [{"type": "divider"}] * 101}) is not None
    long_header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
    assert check_view({"type": "home", "blocks": [long_header]}) is not None
