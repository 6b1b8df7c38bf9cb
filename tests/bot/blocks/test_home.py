"""The App Home view stays valid Block Kit (the fake's check: slack_sdk's models and Slack's
limits) under hostile text; Take names the case, Open links the investigation's page."""

from __future__ import annotations

from typing import Any

from bot.blocks.home import HOME_TAKE, MAX_BLOCKS, OPEN, HomeFigures, HomeRow, home_view
from tests.fakes.block_kit import check_view

HOSTILE = "<!channel> *bold* <https://evil.example|docs> 185.220.101.42 " + "a" * 5000


def _rows(n: int, title: str = "x", start: int = 0) -> list[HomeRow]:
    return [HomeRow(i, title, "high", f"inv{i:04x}", "true_positive") for i in range(start, n)]


def _texts(view: dict[str, Any]) -> str:
    return str(view)


def test_take_names_the_case_and_open_links_the_page() -> None:
    view = home_view(_rows(2), _rows(4, start=2), _rows(1), web_url="https://socbot.example/")
    assert check_view(view) is None
    takes = [b["accessory"] for b in view["blocks"] if b.get("accessory", {}).get("value")]
    assert [(t["action_id"], t["value"]) for t in takes] == [(HOME_TAKE, "2"), (HOME_TAKE, "3")]
    opens = [b["accessory"]["url"] for b in view["blocks"] if b.get("accessory", {}).get("url")]
    assert opens == [
        "https://socbot.example/web/investigations/inv0000",
        "https://socbot.example/web/investigations/inv0001",
        "https://socbot.example/web/investigations/inv0000",
    ]
    unowned = next(b for b in view["blocks"] if b.get("block_id") == "home_unowned_2")
    assert unowned["text"]["text"].endswith(
        "<https://socbot.example/web/investigations/inv0002|Open>"
    )
    assert all(
        b["accessory"]["action_id"] == OPEN
        for b in view["blocks"]
        if "url" in str(b.get("accessory"))
    )


def test_no_open_without_a_safe_web_url() -> None:
    for url in ("", "javascript:alert(1)", "https://x.example/<!channel>|"):
        view = home_view(_rows(1), _rows(1), _rows(1), web_url=url)
        assert check_view(view) is None
        assert "/web/investigations/" not in _texts(view)


def test_hostile_text_is_escaped_defanged_and_cut() -> None:
    view = home_view(
        _rows(40, HOSTILE),
        _rows(40, HOSTILE),
        [HomeRow(7, HOSTILE, HOSTILE, "inv7", HOSTILE)],
        web_url="https://socbot.example",
    )
    assert check_view(view) is None
    assert len(view["blocks"]) <= MAX_BLOCKS
    text = _texts(view)
    assert "<!channel>" not in text and "<https://evil" not in text and "185.220.101.42" not in text
    assert "185.220.101[.]42" in text
    mention = home_view([], [], [], notice="the case is owned by <@UANALYST1>")
    assert "⚠️ the case is owned by <@UANALYST1>" in _texts(mention)  # socbot's own mrkdwn
    rows = [b for b in view["blocks"] if str(b.get("block_id", "")).startswith("home_mine_")]
    assert len(rows) == 25  # ROWS a section
    assert all(len(b["text"]["text"]) < 700 for b in rows)


def test_figures_and_an_empty_home() -> None:
    figures = HomeFigures(waiting=3, running=1, held=2, cases=10, decided=4, agreed=3, cost_usd=1.5)
    view = home_view([], [], [], figures=figures)
    assert check_view(view) is None
    text = _texts(view)
    assert text.count("Nothing here.") == 3
    assert "*3* waiting · *1* running · *2* held by policy" in text
    assert "10 cases · agreement *75 %* (3 of 4 decided) · cost $1.50" in text
    assert "nothing decided yet" in _texts(home_view([], [], []))


def test_the_fake_refuses_a_home_view_slack_refuses() -> None:
    assert check_view({"type": "home", "blocks": [{"type": "divider"}] * 101}) is not None
    long_header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
    assert check_view({"type": "home", "blocks": [long_header]}) is not None
