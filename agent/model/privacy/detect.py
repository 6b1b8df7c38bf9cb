"""Recognisers of personal data in free text, and in the rows of a tool result.

Tight regular expressions, run on NFKC text: e-mail addresses (also percent-encoded in
a URL, ``j.doe%40example.com``), Windows ``DOMAIN\\user`` names, phone numbers
(international ``+…`` or US ``(202) 555-0143`` / ``202-555-0143``, checked by
``phonenumbers``), IPv4/IPv6 addresses (``ipaddress`` decides internal), host names under
the internal domain suffixes, and a team's own patterns. Person names have no pattern:
they are known from the alert and from marked columns (``personal = [...]``).
Each finding is ``(kind, value, spelling, key)``: the value a tool gets back, the
spelling as it stands in the text, and the key that says two spellings are one value.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterator
from typing import NamedTuple
from urllib.parse import unquote

import phonenumbers

from agent.model.privacy.tokens import match_key
from alerts.addresses import is_internal_ipv4, unwrap
from config.privacy_settings import PrivacySettings

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*\.[A-Za-z]{{2,24}}(?![A-Za-z0-9-])"
EMAIL = re.compile(rf"(?<![\w.+-])[\w+-](?:[\w.+-]{{0,63}})(?:@|%40)({_DOMAIN})", re.IGNORECASE)
_AT = re.compile(r"@|%40")
_LOCAL_RUN = re.compile(r"[\w.+-]*")  # letters, digits and ._+- (an e-mail's local part)
_AT_DOMAIN = re.compile(rf"(?:@|%40){_DOMAIN}", re.IGNORECASE)
# An e-mail read from its "@" (text without "%40"): what stands after each "@" that a
# domain can be made of, and what before it a local part can (read backwards, up to 64).
# Domains are then matched once per distinct run (a 100 kB log names a few dozen).
_AT_RUN = {True: re.compile(r"@([A-Za-z0-9.-]*)"), False: re.compile(r"@([A-Za-z0-9.-]*)", re.I)}
_TAIL = re.compile(r"@([\w.+-]{0,64})")  # on the text backwards
_DOMAIN_OF = {True: re.compile(_DOMAIN), False: re.compile(_DOMAIN, re.IGNORECASE)}
DOMAIN_USER = re.compile(r"(?<![\w\\])([A-Z][A-Z0-9-]{1,14})\\{1,2}([A-Za-z][\w.-]{1,63})")
# No look-behinds in front (they make a scan of 100 kB ten times slower): a match glued
# to the word before it is dropped by ``_alone``.
PHONE_INTL = re.compile(r"\+[1-9][0-9 ().-]{6,18}[0-9](?![0-9])")
PHONE_US = re.compile(r"(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[-.])[0-9]{3}[-.][0-9]{4}(?![\w-])")
# Where a US number can end: PHONE_US is tried only just before each (a scan that starts a
# match at every digit costs three times as much over a long result).
_US_END = re.compile(r"[-.][0-9]{4}(?![\w-])")
IPV4 = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?![\w]|\.[0-9])")
IPV6 = re.compile(r"[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){1,6}(?![\w:])")
# Values too common to be anyone's: never pseudonymised (they would blind the model).
COMMON = frozenset(
    "root admin administrator system nobody guest unknown none null n/a anonymous "
    "service daemon localhost true false".split()
)
NAME_KEYS = frozenset(
    "displayname display_name fullname full_name name_full givenname given_name firstname "
    "first_name surname lastname last_name familyname family_name personname person_name "
    "employee_name".split()
)


class Finding(NamedTuple):
    kind: str
    value: str
    spelling: str
    key: str


def usable(kind: str, value: str) -> bool:
    """Whether ``value`` is worth a pseudonym: not short, numeric or a common word."""
    text = value.strip()
    if len(text) < 3 or text.lower() in COMMON:
        return False
    return kind != "USER" or not text.replace(".", "").isdigit()


class Detector:
    """The recognisers the settings switch on."""

    def __init__(
        self, settings: PrivacySettings, *, internal_suffixes: tuple[str, ...] = ()
    ) -> None:
        self.settings = settings
        self.patterns = [re.compile(p) for p in settings.patterns]
        suffixes = [s.strip(".") for s in internal_suffixes if s.strip(".")]
        self.hosts = (
            re.compile(
                rf"(?<![\w.-]){_LABEL}(?:\.{_LABEL})*\.(?:{'|'.join(map(re.escape, suffixes))})"
                r"(?![\w-]|\.[A-Za-z0-9])",
                re.IGNORECASE,
            )
            if settings.hosts and suffixes
            else None
        )

    def scan(self, text: str) -> Iterator[Finding]:
        """Every personal value the patterns find in ``text`` (NFKC already)."""
        s = self.settings
        if s.emails and ("@" in text or _encoded_at(text)):
            for spelling in _emails(text):  # each spelling once
                value = unquote(spelling) if "%40" in spelling else spelling
                if "@" in value:
                    yield Finding("EMAIL", value, spelling, match_key(value))
        if s.users and "\\" in text:
            for m in DOMAIN_USER.finditer(text):
                user = m.group(2).rstrip(".-")
                if usable("USER", user):
                    yield Finding("USER", user, user, match_key(user))
        if s.phones:
            yield from _phones(text)
        if s.ips != "off":
            yield from self._ips(text)
        if self.hosts is not None:
            for m in self.hosts.finditer(text):
                yield Finding("HOST", m.group(0), m.group(0), match_key(m.group(0)))
        for pattern in self.patterns:
            for m in pattern.finditer(text):
                if m.group(0).strip():
                    yield Finding("ID", m.group(0), m.group(0), match_key(m.group(0)))

    def _ips(self, text: str) -> Iterator[Finding]:
        candidates = [m.group(0) for m in IPV4.finditer(text) if _alone(text, m, ".")]
        if ":" in text:
            candidates += [m.group(0) for m in IPV6.finditer(text) if _alone(text, m, ":.")]
        for spelling in candidates:
            found = _address(spelling)
            if found is not None and (self.settings.ips == "all" or not found[1]):
                yield Finding("IP", spelling, spelling, found[0])

    def value(self, kind_hint: str, value: str) -> Finding | None:
        """The finding of a value known to be personal (an alert entity, a marked column):
        an e-mail, IP or phone by its shape, else ``kind_hint`` (USER, PERSON, HOST)."""
        text = value.strip()
        s = self.settings
        if "@" in text and EMAIL.fullmatch(text) and kind_hint != "USER":
            return Finding("EMAIL", text, text, match_key(text)) if s.emails else None
        address = _address(text)
        if address is not None:
            wanted = s.ips == "all" or (s.ips == "internal" and not address[1])
            return Finding("IP", text, text, address[0]) if wanted else None
        phone = next(iter(_phones(text)), None)
        if phone is not None and phone.spelling == text:
            return phone if s.phones else None
        if kind_hint == "USER" and " " in text and s.names:
            kind_hint = "PERSON"
        on = {"USER": s.users, "PERSON": s.names, "HOST": s.hosts}
        if not on.get(kind_hint) or not usable(kind_hint, text):
            return None
        return Finding(kind_hint, text, text, match_key(text))


_ULA = ipaddress.IPv6Network("fc00::/7")


@functools.lru_cache(maxsize=4096)
def _address(spelling: str) -> tuple[str, bool] | None:
    """An IP address's key and whether it is *not* internal (RFC 1918, CGNAT, loopback,
    link-local, IPv6 ULA; documentation ranges are not internal); None for no address."""
    try:
        address = unwrap(ipaddress.ip_address(spelling))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv4Address):
        internal = is_internal_ipv4(address) or address.is_link_local
    else:
        internal = address in _ULA or address.is_link_local or address.is_loopback
    return ipaddress.ip_address(spelling).compressed, not internal


def _alone(text: str, m: re.Match[str], joiners: str) -> bool:
    """Whether the match does not continue a word (or a longer number) before it."""
    start = m.start()
    return not start or not (text[start - 1].isalnum() or text[start - 1] in joiners)


def _emails(text: str) -> list[str]:
    """The e-mail addresses in ``text`` (also ``local%40domain``), each once, found from
    their @: the local part is up to 64 letters, digits and ``._+-`` before it, leading
    dots dropped."""
    if _encoded_at(text):
        return list(dict.fromkeys(_encoded_emails(text)))
    # One match per "@" in each list (neither class holds an "@"), so they pair up. Where
    # a domain can stop depends only on its run (what ends the run ends the lookahead), and
    # IGNORECASE changes nothing in ASCII text but the cost.
    plain = text.isascii()
    runs = _AT_RUN[plain].findall(text)
    tails = _TAIL.findall(text[::-1])
    tails.reverse()
    domain_of = {run: _DOMAIN_OF[plain].match(run) for run in set(runs)}
    found: dict[str, None] = {}
    for run, tail in dict.fromkeys(zip(runs, tails, strict=True)):
        domain, local = domain_of[run], tail.rstrip(".")
        if domain is not None and local:
            found[f"{local[::-1]}@{domain.group()}"] = None
    return list(found)


def _encoded_at(text: str) -> bool:
    """Whether ``text`` holds ``%40`` (looking for one character first is ~50 times
    faster where there is none: a three-character search slows on every ``0``)."""
    return "%" in text and "%40" in text


def _encoded_emails(text: str) -> Iterator[str]:
    """``_emails`` of a text holding ``%40`` (the local part may end in its ``40``)."""
    backwards, size = text[::-1], len(text)
    for m in _AT.finditer(text):
        at = m.start()
        domain = _AT_DOMAIN.match(text, at)
        if domain is None:
            continue
        local = _LOCAL_RUN.match(backwards, size - at, size - at + 64)  # read backwards
        start = at - (local.end() - (size - at)) if local else at
        while start < at and text[start] == ".":
            start += 1
        if start < at:
            yield text[start : domain.end()]


def _us_numbers(text: str) -> Iterator[re.Match[str]]:
    """``PHONE_US.finditer(text)``'s matches, looked for only where one can end."""
    done = 0
    for tail in _us_ends(text):
        for start in range(max(done, tail - 14), tail - 11):
            m = PHONE_US.match(text, start)
            if m is not None:
                done = m.end()
                yield m
                break


_SHAPE = bytes.maketrans(b"123456789.", b"000000000-")  # digits as 0, "." as "-"
_WORD_OR_DASH_BYTES = frozenset(
    bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
)


def _us_ends(text: str) -> list[int]:
    """Where each ``_US_END`` match ends (``-``/``.`` and four digits, then no word
    character or ``-``): found with one ``bytes.find`` on the text's shape (digits read as
    0, dots as dashes, any other than ASCII as ``?``: the same offsets); what follows is
    read in the text itself."""
    ascii_only = text.isascii()
    raw = text.encode() if ascii_only else text.encode("ascii", "replace")
    shape = raw.translate(_SHAPE)
    ends: list[int] = []
    at = shape.find(b"-0000")
    while at >= 0:
        if ascii_only:
            alone = raw[at + 5 : at + 6] not in _WORD_OR_DASH_BYTES
        else:  # (``\w``: a letter or digit of any script, or "_")
            after = text[at + 5 : at + 6]
            alone = not after or not (after.isalnum() or after in "_-")
        if alone:
            ends.append(at + 5)
        at = shape.find(b"-0000", at + 1)
    return ends


def _phones(text: str) -> Iterator[Finding]:
    found = ((PHONE_INTL.finditer(text), None), (_us_numbers(text), "US"))
    for matches, region in found:
        for m in matches:
            if not _alone(text, m, "+(-"):
                continue
            try:
                number = phonenumbers.parse(m.group(0), region)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(number):
                e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
                yield Finding("PHONE", m.group(0), m.group(0), e164)
