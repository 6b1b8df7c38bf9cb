"""What counts as internal in a name or a piece of a URL, for the threat-intel gate.

``host_reason`` judges a host name: configured and special-use internal suffixes,
an internal name carried as a subdomain of another domain (``db01.corp.evil.net``),
a private address encoded in the labels (``10-0-0-1.sslip.io``, ``0a000001.nip.io``,
``fd00--1.sslip.io``) and names that resolve everything to loopback.

``url_part_reasons`` judges the userinfo, path, query and fragment of a URL (and
``text_reasons`` free text): it percent-decodes (up to three layers; deeper nesting
is refused), reads each layer refanged too (``db01[.]corp``, ``bob(at)corp.com``),
splits into tokens and looks at each token for e-mail addresses, internal names and
non-public addresses in any spelling, and at the text behind every run of hex or
base64 digits (either alphabet, a JWT's segments), read at each alignment so that a
blob after ``path/`` or ``a+`` is read too. Each reason is a short phrase for the model.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Iterator
from urllib.parse import SplitResult, parse_qsl, unquote

from alerts.addresses import (
    ipv4_in_host,
    ipv6_in_label,
    is_internal_ipv4,
    loopback_wildcard,
    non_public_reason,
    parse_ipv4_loose,
    unwrap,
)
from alerts.defang import refang

# Special-use names that are never public, whatever the configuration says.
ALWAYS_INTERNAL = (".localhost", ".local", ".internal", ".test", ".invalid", ".example", ".arpa")
# Query keys whose value is a host: a bare single-label value there is an internal name.
HOST_KEYS = frozenset(
    "h host hostname server srv computer computername machine node fqdn dc workstation "
    "device target dest destination".split()
)
_TOKEN_SPLIT = re.compile(r"[^\w.:@\[\]-]+")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_DOTTED_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_NUMERIC = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?$", re.I)
_DOTTED_QUAD = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
_HOSTNAME = re.compile(r"^(?=.*[a-z])[a-z0-9_-]+(?:\.[a-z0-9_-]+)+\.?$", re.I)
_FIRST_NAME = re.compile(r"[^\w.-]")  # what ends the name in a host parameter's value
_SINGLE_LABEL = re.compile(r"^(?=.*[a-z])[a-z0-9][a-z0-9_-]{0,62}$", re.I)
_HEX_RUN = re.compile(r"[0-9a-f]{12,}", re.I)
_BLOB_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}")  # base64 digits (both alphabets) and hex
_LAYERS = 3  # percent-decoding layers looked through; more are refused
TOO_DEEP = f"percent-encoding nested more than {_LAYERS} layers deep"
_URL_SAFE = str.maketrans("-_", "+/")  # base64url digits as standard base64 ones
_NO_HOST_V6 = ipaddress.IPv6Network("::/104")  # as IPv4-compatible: 0.0.0.0/8
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
        reasons.update(dict.fromkeys(_reasons(component, suffixes)))
    for key, value in parse_qsl(parts.query):  # a blank value names no host
        if key.lower() in HOST_KEYS:
            for text in _decodings(value) or ():  # "srv%2520", "srv.:445", "\\\\srv\\c$"
                name = _FIRST_NAME.split(text.strip(" ./\\"))[0].rstrip(".")
                if _SINGLE_LABEL.match(name):
                    reasons[f"an internal host name ({name})"] = None
    return list(reasons)


def text_reasons(text: str, internal_suffixes: Iterable[str]) -> list[str]:
    """Why free text must not be sent (the tokens of ``url_part_reasons``: e-mail
    addresses, internal names and non-public addresses in any spelling, also behind
    percent, base64 or hex encoding), [] when nothing internal is in it."""
    return list(dict.fromkeys(_reasons(text, tuple(internal_suffixes))))


def _reasons(text: str, suffixes: tuple[str, ...]) -> Iterator[str]:
    """The reasons in every decoding of ``text``: its tokens, then the text behind its
    runs of base64 or hex digits."""
    decodings = _decodings(text)
    if decodings is None:
        yield TOO_DEEP
        return
    for decoded in decodings:
        for token in _TOKEN_SPLIT.split(decoded):
            yield from _token_reasons(token, suffixes)
        blobs = [*_HEX_RUN.findall(decoded), *_BLOB_RUN.findall(decoded)]
        for inner in _TOKEN_SPLIT.split(" ".join(t for b in blobs for t in _blob_texts(b))):
            for reason in _token_reasons(inner, suffixes, encoded=True):
                yield f"{reason}, encoded"


def _token_reasons(
    token: str, suffixes: tuple[str, ...], *, encoded: bool = False
) -> Iterator[str]:
    """The reasons in one token. An ``encoded`` one was decoded from digits, where noise
    is common: an e-mail address there needs a dot in its domain, and an IPv6 address in
    ::/104 ("::", "::de": 0.0.0.0/8 at most, no host) is no reason."""
    token = token.strip(".-_")
    if not token:
        return
    if "@" in token and (_DOTTED_EMAIL if encoded else _EMAIL).match(token.strip("[]:")):
        yield f"an e-mail address ({token.strip('[]:')})"
        return
    if token.count(":") >= 2:
        reason = _ipv6_reason(token, encoded=encoded)
        if reason:
            yield reason
            return
    for piece in token.strip("[]").split(":"):
        reason = _piece_reason(piece.strip(".-_"), suffixes)
        if reason:
            yield reason


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


def _ipv6_reason(token: str, *, encoded: bool) -> str | None:
    try:  # no zone id: "%" splits tokens
        ip = ipaddress.IPv6Address(token.strip("[]"))
    except ValueError:
        return None
    if encoded and ip in _NO_HOST_V6:
        return None
    reason = non_public_reason(ip)
    return f"a {reason} ({unwrap(ip)})" if reason else None


def _decodings(component: str) -> list[str] | None:
    """The component as written and percent-decoded (up to three layers), NFKC-normalised,
    each layer also refanged (``alerts.defang``); None when a fourth layer would still
    decode (refused: no unbounded unwrapping).

    A "+" (a space in a query string) needs no decoding of its own: it splits tokens as a
    space does, and a blob after it is read at its own alignment (``_blob_texts``)."""
    out: list[str] = []
    text, layers = component, 0
    while True:
        text = unicodedata.normalize("NFKC", text).translate(_DOTS)
        for form in (text, refang(text)):  # "db01[.]corp", "bob(at)corp.com": as meant
            if form not in out:
                out.append(form)
        decoded = unquote(text)  # a broken escape stays as written
        if decoded == text:
            return out
        if layers == _LAYERS:
            return None
        text, layers = decoded, layers + 1


def _blob_texts(run: str) -> Iterator[str]:
    """The text behind a run of hex digits (read from its first and second digit), or
    of base64 digits (read from each of its first four): a blob may begin inside the
    run, after "path/" or "a+". A broken byte (U+FFFD) or a control character is no
    word character: it splits the text's tokens, hiding none."""
    if _HEX_RUN.fullmatch(run):
        for start in range(2):
            digits = run[start:]
            yield bytes.fromhex(digits[: len(digits) // 2 * 2]).decode(errors="replace")
        return
    for start in range(4):
        blob = run[start:].translate(_URL_SAFE)
        blob = blob[: len(blob) - (len(blob) % 4 == 1)]  # a lone last digit is no byte
        yield base64.b64decode(blob + "=" * (-len(blob) % 4)).decode(errors="replace")


def _bare_suffixes(internal_suffixes: Iterable[str]) -> Iterator[str]:
    for suffix in (*internal_suffixes, *ALWAYS_INTERNAL):
        bare = suffix.lower().strip(".")
        if bare:
            yield bare
