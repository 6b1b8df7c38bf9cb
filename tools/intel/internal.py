"""What counts as internal in a name or a piece of a URL, for the threat-intel gate.

``host_reason`` judges a host name: configured and special-use internal suffixes,
an internal name carried as a subdomain of another domain (``db01.corp.evil.net``),
a private address encoded in the labels (``10-0-0-1.sslip.io``, ``0a000001.nip.io``,
``fd00--1.sslip.io``) and names that resolve everything to loopback.

``url_part_reasons`` judges the userinfo, path, query and fragment of a URL: it
percent-decodes (repeatedly), splits into tokens and looks at each token (and at
the text behind base64 or hex tokens) for e-mail addresses, internal names and
non-public addresses in any spelling. Each reason is a short phrase for the model.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Iterator
from urllib.parse import SplitResult, parse_qsl, unquote, unquote_plus

from alerts.addresses import (
    ipv4_in_host,
    ipv6_in_label,
    is_internal_ipv4,
    loopback_wildcard,
    non_public_reason,
    parse_ipv4_loose,
    unwrap,
)

# Special-use names that are never public, whatever the configuration says.
ALWAYS_INTERNAL = (".localhost", ".local", ".internal", ".test", ".invalid", ".example", ".arpa")
# Query keys whose value is a host: a bare single-label value there is an internal name.
HOST_KEYS = frozenset(
    "h host hostname server srv computer computername machine node fqdn dc workstation "
    "device target dest destination".split()
)
_TOKEN_SPLIT = re.compile(r"[^\w.:@\[\]-]+")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_NUMERIC = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?$", re.I)
_DOTTED_QUAD = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
_HOSTNAME = re.compile(r"^(?=.*[a-z])[a-z0-9_-]+(?:\.[a-z0-9_-]+)+\.?$", re.I)
_SINGLE_LABEL = re.compile(r"^(?=.*[a-z])[a-z0-9][a-z0-9_-]{0,62}$", re.I)
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]{8,}={0,2}$")
_HEX = re.compile(r"^(?:[0-9a-f]{2}){6,}$", re.I)
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def is_internal_domain(name: str, internal_suffixes: Iterable[str]) -> bool:
    """True when ``name`` equals or ends with a configured or special-use suffix."""
    name = name.lower().rstrip(".")
    for bare in _bare_suffixes(internal_suffixes):
        if name == bare or name.endswith("." + bare):
            return True
    return False  # "localhost" itself: the ".localhost" of ALWAYS_INTERNAL, bare


def host_reason(host: str, internal_suffixes: Iterable[str]) -> str | None:
    """Why the host name ``host`` is internal (a phrase after "it"), or None."""
    name = host.lower().rstrip(".")
    if is_internal_domain(name, internal_suffixes):
        return "is an internal domain"
    labels = name.split(".")
    for bare in _bare_suffixes(internal_suffixes):
        inner = bare.split(".")
        for i in range(1, len(labels) - len(inner) - 1):  # a label before, two after
            if labels[i : i + len(inner)] == inner:
                return f"carries the internal domain {bare!r} as a subdomain"
    ip = ipv4_in_host(name)
    if ip is not None:
        return f"encodes the {non_public_reason(ip) or 'internal address'} {ip} in its labels"
    for label in labels:
        ip6 = ipv6_in_label(label)
        if ip6 is not None and (reason := non_public_reason(ip6)):
            return f"encodes the {reason} {ip6} in its labels"
    if loopback_wildcard(name):
        return "resolves to the loopback address (wildcard DNS)"
    return None


def url_part_reasons(parts: SplitResult, internal_suffixes: Iterable[str]) -> list[str]:
    """Why the userinfo, path, query or fragment of a URL must not be sent ([] = fine)."""
    suffixes = tuple(internal_suffixes)
    reasons: dict[str, None] = {}
    if "@" in parts.netloc:
        reasons["a user name or credentials"] = None
    for component in (parts.path, parts.query, parts.fragment):
        for text in _decodings(component):
            for token in _TOKEN_SPLIT.split(text):
                reasons.update(dict.fromkeys(_token_reasons(token, suffixes, depth=0)))
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() in HOST_KEYS and _SINGLE_LABEL.match(value.strip()):
            reasons[f"an internal host name ({value.strip()})"] = None
    return list(reasons)


def text_reasons(text: str, internal_suffixes: Iterable[str]) -> list[str]:
    """Why free text must not be sent (the tokens of ``url_part_reasons``: e-mail
    addresses, internal names and non-public addresses in any spelling, also behind
    percent, base64 or hex encoding), [] when nothing internal is in it."""
    suffixes = tuple(internal_suffixes)
    reasons: dict[str, None] = {}
    for decoded in _decodings(text):
        for token in _TOKEN_SPLIT.split(decoded):
            reasons.update(dict.fromkeys(_token_reasons(token, suffixes, depth=0)))
    return list(reasons)


def _token_reasons(token: str, suffixes: tuple[str, ...], *, depth: int) -> Iterator[str]:
    written, token = token, token.strip(".-_")
    if not token:
        return
    if "@" in token and _EMAIL.match(token.strip("[]:")):
        yield f"an e-mail address ({token.strip('[]:')})"
        return
    if token.count(":") >= 2:
        reason = _ipv6_reason(token)
        if reason:
            yield reason
            return
    for piece in token.strip("[]").split(":"):
        reason = _piece_reason(piece.strip(".-_"), suffixes)
        if reason:
            yield reason
    if depth == 0:  # "-" and "_" are base64url digits: the blob as written too
        for blob in dict.fromkeys((token, written.strip("."))):
            decoded = _decoded_blob(blob)
            for inner in _TOKEN_SPLIT.split(decoded or ""):
                for reason in _token_reasons(inner, suffixes, depth=1):
                    yield f"{reason}, encoded"


def _piece_reason(piece: str, suffixes: tuple[str, ...]) -> str | None:
    if not piece:
        return None
    if _NUMERIC.match(piece):
        ip = parse_ipv4_loose(piece)
        if ip is None:
            return None
        if _DOTTED_QUAD.match(piece):
            reason = non_public_reason(ip)
            return f"a {reason} ({ip})" if reason else None
        return f"an internal address ({ip}, written {piece})" if is_internal_ipv4(ip) else None
    if _HOSTNAME.match(piece):
        reason = host_reason(piece, suffixes)
        return f"an internal host name ({piece})" if reason else None
    return None


def _ipv6_reason(token: str) -> str | None:
    try:  # no zone id: "%" splits tokens
        ip = ipaddress.IPv6Address(token.strip("[]"))
    except ValueError:
        return None
    reason = non_public_reason(ip)
    return f"a {reason} ({unwrap(ip)})" if reason else None


def _decodings(component: str) -> list[str]:
    """The component as written and percent-decoded (up to three layers), normalised."""
    out: list[str] = []
    text = component
    for _ in range(4):
        normalised = unicodedata.normalize("NFKC", text).translate(_DOTS)
        if normalised not in out:
            out.append(normalised)
        text, previous = unquote(text, errors="replace"), text
        if text == previous:
            break
    plus = unquote_plus(component, errors="replace")
    if plus not in out:
        out.append(plus)
    return out


def _decoded_blob(token: str) -> str | None:
    """The text behind a base64 or hex token, if it is one (unprintable bytes as spaces)."""
    raw: bytes | None = None
    if _HEX.match(token):
        raw = bytes.fromhex(token)
    elif _BASE64.match(token):
        padded = token + "=" * (-len(token) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            return None
    if raw is None:
        return None
    # an unprintable or broken byte must not hide the text around it: it splits tokens
    text = raw.decode("utf-8", errors="replace").replace("\ufffd", " ")
    shown = "".join(c if c.isprintable() else " " for c in text)
    return shown if shown.strip() else None


def _bare_suffixes(internal_suffixes: Iterable[str]) -> Iterator[str]:
    for suffix in (*internal_suffixes, *ALWAYS_INTERNAL):
        bare = suffix.lower().strip(".")
        if bare:
            yield bare
