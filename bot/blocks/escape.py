"""Make untrusted text safe to post to Slack: escape control sequences, defang indicators.

Model output, alert fields and tool results are untrusted. Posted through mrkdwn,
``<!channel>``, ``<@U123>``, ``<!subteam^S1>`` or ``<https://evil.example|docs>`` would
notify people or disguise a link. ``escape`` makes every such sequence inert: Slack's
three control characters become entities (Slack renders them back as plain ``<``,
``&`` and ``>``, also inside code blocks) and bare ``@channel``/``@here``/``@everyone``
get a zero-width joiner after the ``@``.

``defang`` rewrites indicators the SOC way so nothing posted is clickable or
copy-pastes into a live request: ``hxxps://evil[.]com/x``, ``185.220.101[.]42``,
``a[@]b[.]com``. URLs, IPv4 addresses and e-mail addresses are found by pattern;
bare domains by a list of common TLDs plus the alert's known indicators (pass
them as ``indicators``). ``defang`` is idempotent. The spelling itself is
``alerts.defang``'s, which reads it back (``refang``) wherever socbot takes input.

``mrkdwn`` is the one call for model text: Markdown basics become Slack mrkdwn,
then defang + escape; code blocks are kept (language tags dropped) and an unclosed
fence is closed. ``plain`` is the same safety for ``plain_text`` objects (headers,
buttons), where entities would show literally.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from alerts.defang import defang_email, defang_host, defang_ipv4, defang_ipv6, defang_url

ZWJ = "\u200d"

_BROADCAST = re.compile(r"(?<![\w@])@(channel|here|everyone)\b", re.IGNORECASE)

_URL = re.compile(r"\b(?:https?|ftps?|sftp)://[^\s<>\"'`]+", re.IGNORECASE)
_EMAIL = re.compile(
    r"(?<![\w.+-])[\w.+-]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\b",
    re.IGNORECASE,
)
_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?!\w|\.\d)"
)
_TLDS = (
    "com|net|org|info|biz|io|co|me|ru|cn|su|xyz|top|online|site|club|live|shop|"
    "tk|ml|ga|cf|gq|pw|cc|ws|ly|ir|kp|onion|app|dev|link|click|icu|buzz|zip|mov"
)
_DOMAIN = re.compile(
    rf"(?<![\w@.\-/\[])(?:[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?\.)+(?:{_TLDS})(?![\w\-]|\.\w)",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?)]}'\""


def escape(text: str) -> str:
    """Escape Slack mrkdwn control characters and neutralise broadcast mentions.

    After this no ``<...>`` sequence (user/channel/group mentions, ``<!channel>``,
    ``<url|label>`` links, ``<!date^...>``) can reach Slack's parser.
    """
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: f"@{ZWJ}{m.group(1)}", out)


def plain(text: str, indicators: Iterable[str] = ()) -> str:
    """Safe text for ``plain_text`` objects: defanged, no angle brackets, no broadcasts."""
    out = defang(text, indicators).replace("<", "\u2039").replace(">", "\u203a")
    return _BROADCAST.sub(lambda m: f"@{ZWJ}{m.group(1)}", out)


def _defang_url(url: str) -> str:
    trail = ""
    while url and url[-1] in _TRAILING:
        trail, url = url[-1] + trail, url[:-1]
    return defang_url(url) + trail


def _defang_known(value: str) -> str:
    if "://" in value:
        return _defang_url(value)
    if "@" in value:
        return defang_email(value)
    if _IPV4.fullmatch(value):
        return defang_ipv4(value)
    if value.count(":") >= 2:  # IPv6
        return defang_ipv6(value)
    return defang_host(value)


def _known_pattern(indicators: Iterable[str]) -> str | None:
    values = {v.strip() for v in indicators if v and v.strip()}
    # Only values that could be clicked or resolved; hashes and principals stay as-is.
    values = {v for v in values if "." in v or "@" in v or v.count(":") >= 2}
    if not values:
        return None
    alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
    return rf"(?<![\w\-])(?:{alternatives})(?![\w\-]|\.\w)"


def defang(text: str, indicators: Iterable[str] = ()) -> str:
    """Defang URLs, IPv4 addresses, e-mails, common-TLD domains and the given indicators."""
    known = _known_pattern(indicators)
    parts = [
        rf"(?P<url>{_URL.pattern})",
        rf"(?P<email>{_EMAIL.pattern})",
        rf"(?P<ip>{_IPV4.pattern})",
        rf"(?P<domain>{_DOMAIN.pattern})",
    ]
    if known:
        parts.insert(1, rf"(?P<known>{known})")
    pattern = re.compile("|".join(parts), re.IGNORECASE)

    def replace(m: re.Match[str]) -> str:
        kind, value = m.lastgroup, m.group(0)
        if kind == "url":
            return _defang_url(value)
        if kind == "known":
            return _defang_known(value)
        if kind == "email":
            return defang_email(value)
        if kind == "ip":
            return defang_ipv4(value)
        return defang_host(value)

    return pattern.sub(replace, text)


# --- Markdown -> mrkdwn -------------------------------------------------------------

_CODE = re.compile(r"```[^\n`]*\n?(?P<body>.*?)(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*([^)\s]+)(?:\s+\"[^\"\n]*\")?\s*\)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[*+-][ \t]+", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$", re.MULTILINE)
_BOLD_MARK = "\x00"
_LANG = re.compile(r"[\w+#.-]*")
_TABLE = re.compile(r"^(?:[ \t]*\|.*\|[ \t]*(?:\n|\Z)){2,}", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}", re.MULTILINE)
_QUOTE = re.compile(r"^&gt;(?= )", re.MULTILINE)


def _prose(text: str, indicators: Iterable[str]) -> str:
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(1) else m.group(2), text)
    text = _RULE.sub("", text)
    text = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    text = text.replace(_BOLD_MARK, "*")
    return _QUOTE.sub(">", escape(defang(text, indicators)))  # "> quote" lines stay quotes


def _code(chunk: str, indicators: Iterable[str]) -> str:
    if not chunk.startswith("```"):
        return escape(defang(chunk, indicators))
    body = chunk[3:]
    newline = body.find("\n")
    header = body[:newline] if newline >= 0 else ""
    if newline >= 0 and _LANG.fullmatch(header):
        body = body[newline + 1 :]  # drop the language tag line (``` sql)
    body = body.removesuffix("```").strip("\n")
    return "```\n" + escape(defang(body, indicators)) + "\n```"


def _prose_and_tables(text: str, indicators: Iterable[str]) -> str:
    """Slack has no tables: a Markdown table goes in a code block to stay aligned."""
    out: list[str] = []
    pos = 0
    for m in _TABLE.finditer(text):
        if _TABLE_RULE.search(m.group(0)):
            out.append(_prose(text[pos : m.start()], indicators))
            out.append(_code(f"```\n{m.group(0).rstrip()}\n```", indicators) + "\n")
            pos = m.end()
    out.append(_prose(text[pos:], indicators))
    return "".join(out)


def mrkdwn(text: str, indicators: Iterable[str] = ()) -> str:
    """Model Markdown to safe Slack mrkdwn: formatting converted, defanged, escaped."""
    indicators = tuple(indicators)
    out: list[str] = []
    pos = 0
    for m in _CODE.finditer(text):
        out.append(_prose_and_tables(text[pos : m.start()], indicators))
        out.append(_code(m.group(0), indicators))
        pos = m.end()
    out.append(_prose_and_tables(text[pos:], indicators))
    return "".join(out).strip()
