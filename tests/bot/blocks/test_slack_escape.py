"""Escaping and defanging of untrusted text posted to Slack."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.blocks.escape import ZWJ, defang, escape, mrkdwn, plain

HOSTILE = [
    ("<!channel> wake up", "&lt;!channel&gt; wake up"),
    ("<!here|here>", "&lt;!here|here&gt;"),
    ("<!everyone>", "&lt;!everyone&gt;"),
    ("ping <@U024BE7LH> now", "ping &lt;@U024BE7LH&gt; now"),
    ("<@W123|bob>", "&lt;@W123|bob&gt;"),
    ("see <#C024BE7LR|general>", "see &lt;#C024BE7LR|general&gt;"),
    ("<!subteam^SAZ94GDB8|oncall>", "&lt;!subteam^SAZ94GDB8|oncall&gt;"),
    ("<!date^1392734382^{date}|x>", "&lt;!date^1392734382^{date}|x&gt;"),
    ("<mailto:a@b.c|mail>", "&lt;mailto:a@b.c|mail&gt;"),
    ("already &lt;!channel&gt;", "already &amp;lt;!channel&amp;gt;"),
    ("a & b > c < d", "a &amp; b &gt; c &lt; d"),
    ("@channel look", f"@{ZWJ}channel look"),
    ("hey @here!", f"hey @{ZWJ}here!"),
    ("@EVERYONE", f"@{ZWJ}EVERYONE"),
    ("mail me@here.example", "mail me@here.example"),  # not a broadcast
    ("@channels is fine", "@channels is fine"),
]


@pytest.mark.parametrize(("raw", "expected"), HOSTILE)
def test_escape_makes_control_sequences_inert(raw: str, expected: str) -> None:
    assert escape(raw) == expected


def _unsafe(text: str) -> list[str]:
    problems = [s for s in ("<!", "<@", "<#") if s in text]
    problems += [m for m in re.findall(r"<[^>]*>", text) if "|" in m]
    if re.search(r"(?<![\w@])@(channel|here|everyone)\b", text, re.IGNORECASE):
        problems.append("broadcast")
    return problems


_PIECES = [
    "<!channel>",
    "<!here>",
    "@here",
    "@channel",
    "<@U1|x>",
    "<#C1>",
    "<!subteam^S1>",
    "<https://evil.com|docs>",
    "```",
    "**",
    "# ",
    "[a](b)",
    "&lt;",
    "&",
    "@",
    "<",
    ">",
]
HOSTILE_TEXT = (
    st.text(alphabet=st.sampled_from(list("<>!@#|^&;:/. abcUCS0123-_*`~\n")))
    | st.lists(st.sampled_from(_PIECES) | st.text(max_size=3)).map("".join)
    | st.text()
)


@settings(max_examples=300, deadline=None)
@example("> ")
@given(HOSTILE_TEXT)
def test_escape_property_no_control_sequence_survives(text: str) -> None:
    for out in (escape(text), mrkdwn(text), mrkdwn(text, ["evil.com"]), plain(text)):
        assert _unsafe(out) == []
        assert "<" not in out
        # only a "> quote" at a line start (a bare ">" when the quote is empty)
        assert ">" not in re.sub(r"(?m)^>(?: |$)", "", out)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_escape_round_trips_through_slack_entities(text: str) -> None:
    out = escape(text)
    unescaped = out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert unescaped.replace(ZWJ, "") == text.replace(ZWJ, "")


DEFANG = [
    ("185.220.101.42", "185.220.101[.]42"),
    ("from 10.0.0.1, then 8.8.8.8.", "from 10.0.0[.]1, then 8.8.8[.]8."),
    ("version 1.2.3", "version 1.2.3"),
    ("999.1.1.1", "999.1.1.1"),
    ("https://evil.com/x", "hxxps://evil[.]com/x"),
    ("HTTP://Evil.COM:8080/a.b?c=d.e", "hxxp://Evil[.]COM:8080/a.b?c=d.e"),
    ("(see https://evil.com/x).", "(see hxxps://evil[.]com/x)."),
    ("ftp://files.example.org/a", "fxp://files[.]example[.]org/a"),
    ("http://185.220.101.42/payload", "hxxp://185[.]220[.]101[.]42/payload"),
    ("a.user+tag@corp.example.com", "a.user+tag[@]corp[.]example[.]com"),
    ("contact evil.com today", "contact evil[.]com today"),
    ("beacon to c2.bad-actor.xyz", "beacon to c2[.]bad-actor[.]xyz"),
    ("report.pdf and main.py", "report.pdf and main.py"),
    ("hxxps://evil[.]com/x stays", "hxxps://evil[.]com/x stays"),
]


@pytest.mark.parametrize(("raw", "expected"), DEFANG)
def test_defang(raw: str, expected: str) -> None:
    assert defang(raw) == expected
    assert defang(defang(raw)) == expected  # idempotent


@pytest.mark.parametrize(
    ("raw", "indicators", "expected"),
    [
        ("talked to payload.lol twice", ["payload.lol"], "talked to payload[.]lol twice"),
        ("cdn.payload.lol too", ["payload.lol"], "cdn.payload[.]lol too"),
        ("notpayload.lol", ["payload.lol"], "notpayload.lol"),
        (
            "v6 2001:db8::dead:beef seen",
            ["2001:db8::dead:beef"],
            "v6 2001[:]db8[:][:]dead[:]beef seen",
        ),
        (
            "hash 44d88612fea8a8f36de82e1278abb02f",
            ["44d88612fea8a8f36de82e1278abb02f"],
            "hash 44d88612fea8a8f36de82e1278abb02f",
        ),
    ],
)
def test_defang_known_indicators(raw: str, indicators: list[str], expected: str) -> None:
    assert defang(raw, indicators) == expected


MRKDWN = [
    ("**Verdict** is bad", "*Verdict* is bad"),
    ("an *important* note", "an _important_ note"),
    ("# Summary\nok", "*Summary*\nok"),
    ("### Details ###", "*Details*"),
    ("- one\n* two\n  - nested", "• one\n• two\n  • nested"),
    ("~~gone~~", "~gone~"),
    ("[the docs](https://evil.com/p)", "the docs (hxxps://evil[.]com/p)"),
    ("[https://good.com](https://evil.com)", "hxxps://good[.]com (hxxps://evil[.]com)"),
    ("2 * 3 * 4", "2 * 3 * 4"),
    ("`<!here>` inline", "`&lt;!here&gt;` inline"),
    ("> quoted <@U1>\n>not a quote", "> quoted &lt;@U1&gt;\n&gt;not a quote"),
    (
        "Hits:\n| ip | n |\n|---|---:|\n| 185.220.101.42 | 12 |\nDone",
        "Hits:\n```\n| ip | n |\n|---|---:|\n| 185.220.101[.]42 | 12 |\n```\nDone",
    ),
    ("| not | a table |\n| no | rule |", "| not | a table |\n| no | rule |"),
]


@pytest.mark.parametrize(("raw", "expected"), MRKDWN)
def test_mrkdwn_converts_markdown_basics(raw: str, expected: str) -> None:
    assert mrkdwn(raw) == expected


def test_mrkdwn_keeps_code_blocks_and_drops_language_tags() -> None:
    text = "Query:\n```sql\nSELECT **x** FROM t WHERE ip = '185.220.101.42' -- <@U1>\n```\n# After"
    assert mrkdwn(text) == (
        "Query:\n```\nSELECT **x** FROM t WHERE ip = '185.220.101[.]42' -- &lt;@U1&gt;\n```"
        "\n*After*"
    )


def test_mrkdwn_closes_an_unclosed_fence() -> None:
    out = mrkdwn("look:\n```\nraw <!channel> stuff")
    assert out == "look:\n```\nraw &lt;!channel&gt; stuff\n```"
    assert out.count("```") % 2 == 0


def test_plain_text_has_no_brackets_or_broadcasts() -> None:
    out = plain("<!channel> @here at https://evil.com")
    assert out == f"\u2039!channel\u203a @{ZWJ}here at hxxps://evil[.]com"
