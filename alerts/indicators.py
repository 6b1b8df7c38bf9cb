"""Indicator extraction from arbitrary alert JSON.

``extract_indicators(data)`` walks any JSON value and returns deduplicated
indicators in first-seen order: IPv4/IPv6 addresses (non-public ones kept and
marked ``private``), domains, URLs, md5/sha1/sha256 hashes, emails and principals
(GCP ``principalEmail``, AWS IAM/STS ARNs and user names).

It aims at what an analyst would look up, not at every token that parses: version
strings (``curl/7.68.0``), timestamps, file names (``config.json``), resource ids
that happen to be hex (GuardDuty detector ids) and links to reference sites
(VirusTotal, MITRE ATT&CK, cloud consoles) are not indicators.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

from alerts.addresses import ipv4_in_host, non_public_reason
from alerts.defang import refang
from alerts.model import Indicator, IndicatorKind

MAX_INDICATORS = 100

_CCTLDS = (
    "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br "
    "bs bt bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz "
    "ec ee eg er es et eu fi fj fk fm fo fr ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw "
    "gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw "
    "ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt mu "
    "mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt "
    "pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc "
    "td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws "
    "ye yt za zm zw"
)
_GTLDS = (
    "com net org info biz edu gov mil int name pro aero coop museum mobi asia tel travel jobs "
    "cat post xxx xyz top online site club shop store tech app dev cloud live life world today "
    "space website fun icu buzz vip work link click loan win bid date download racing review "
    "stream trade party science gdn men kim faith accountant host press ltd group email "
    "digital network solutions services support systems company agency center zone global "
    "city one page blog news media studio design tools run guru best rest monster cyou sbs cfd "
    "bond quest lol mom beauty pics rocks ninja wtf fail ovh google amazon zip mov foo nexus "
    "bar casino bet poker games land plus social chat love tube video cam pink red blue black "
    "gold money cash finance bank credit capital ventures tax legal health care academy school "
    "college university education institute community foundation onion"
)
PUBLIC_TLDS = frozenset((_CCTLDS + " " + _GTLDS).split())
INTERNAL_TLDS = frozenset({"internal", "local", "lan", "corp", "localdomain", "intranet", "home"})
# Common file extensions that are also TLDs: "setup.py" is a file, not Paraguay.
FILE_EXTENSIONS = frozenset(
    "py sh md so rs pl pm ps cs js ts rb go zip mov sys bat cmd ini cfg log txt json yaml yml "
    "xml csv html htm php asp aspx jsp exe dll bin tmp bak conf lock toml env key pem crt".split()
)
# Where a link is documentation, not an observable (never extracted as URL or domain).
REFERENCE_DOMAINS = (
    "virustotal.com",
    "attack.mitre.org",
    "cve.mitre.org",
    "nvd.nist.gov",
    "console.cloud.google.com",
    "cloud.google.com",
    "console.aws.amazon.com",
    "docs.aws.amazon.com",
    "otx.alienvault.com",
    "abuseipdb.com",
    "urlscan.io",
    # vendor consoles linked from their alerts: where to look, not what was seen
    "falcon.crowdstrike.com",
    "security.microsoft.com",
    "portal.azure.com",
    "portal.cloud.microsoft",
    "app.wiz.io",
    "app.datadoghq.com",
    "app.datadoghq.eu",
    "console.chronicle.security",
)
# In a command line a file name ends in these too ("eicar.com", "Safari.app").
COMMAND_FILE_EXTENSIONS = FILE_EXTENSIONS | frozenset(
    "com app exe scr pif msi dmg pkg jar apk ps1 vbs hta lnk iso img".split()
)
# Cloud API endpoints named in every audit record: bare mentions are not indicators.
SERVICE_DOMAINS = ("googleapis.com", "amazonaws.com")

_HASH_NAMES = ("md5", "sha1", "sha256", "sha-1", "sha-256", "sha512")
_HASH_KEY_HINTS = ("hash", "digest", "checksum")
_FILE_CONTEXT = ("file", "process", "proc.", "image", "binary", "sample", "malware", "exe")
_COMMAND_KEY_HINTS = ("cmdline", "commandline", "command_line", "command", "args", "argv")
_PRINCIPAL_KEYS = frozenset(
    {
        "principalemail",
        "principalsubject",
        "principal",
        "username",
        "user_name",
        "user",
        "actor",
        "serviceaccount",
        "serviceaccountemail",
    }
)
_DOMAIN_KEY_HINTS = ("domain", "hostname", "fqdn", "dnsname", "host")
_SKIP_KEY_HINTS = ("useragent", "user_agent", "version")
_PRINCIPAL_PREFIXES = ("user:", "serviceaccount:", "group:", "principal://", "principalset://")
_PLACEHOLDERS = frozenset({"", "-", "n/a", "na", "none", "null", "unknown"})

_LABEL = r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)"
_DOMAIN = rf"(?:{_LABEL}\.)+(?:[a-z]{{2,24}}|xn--[a-z0-9-]{{1,59}})"
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'<>`{}|\\^]+", re.I)
_DOMAIN_RE = re.compile(rf"(?<![\w@.-]){_DOMAIN}(?![\w=-]|\.[a-z0-9])", re.I)
_EMAIL_RE = re.compile(rf"(?<![\w.+-])[a-z0-9][\w.+-]{{0,63}}@{_DOMAIN}(?![\w-]|\.[a-z0-9])", re.I)
_HOST_RE = re.compile(r"^(?:[\w-]+(?:\.[\w-]+)*|[0-9a-f:.]+)$", re.I)  # not "${org}" or "$"
_IPV4_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d|/\d)")
_IPV6_RE = re.compile(r"(?<![\w:.])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:.])", re.I)
_HASH_RE = re.compile(r"(?<![\w/.-])(?:[0-9a-f]{64}|[0-9a-f]{40}|[0-9a-f]{32})(?![\w/.-])", re.I)
_ARN_RE = re.compile(
    r"\barn:aws[a-z-]*:(?:iam::\d{12}:(?:user|role|federated-user)/[\w+=,.@/-]+"
    r"|sts::\d{12}:(?:assumed-role|federated-user)/[\w+=,.@/-]+|iam::\d{12}:root)",
    re.I,
)
# "version 1.2.3.4", "v1.2.3.4", or a product token such as "Chrome/120.0.0.0".
_VERSION_BEFORE = re.compile(
    r"(?:\b(?:version|ver|release|build|v)\s*[:=]?\s*|(?:^|[\s(;,])[a-z][\w.+-]*/)$", re.I
)
_HASH_PREFIX = re.compile(r"(?:md5|sha1|sha256|sha-1|sha-256|hash)\s*[:=]?\s*$", re.I)
_TRAILING = ".,;:)]}'\"!?"
_HASH_KINDS: dict[int, IndicatorKind] = {32: "md5", 40: "sha1", 64: "sha256"}


def extract_indicators(data: Any) -> list[Indicator]:
    """Indicators found anywhere in ``data`` (dicts, lists, strings), deduplicated."""
    found: dict[tuple[str, str], Indicator] = {}
    for key, text, context in _strings(data, "", ""):
        for indicator in _from_string(key, text, context):
            found.setdefault((indicator.kind, indicator.value), indicator)
        if len(found) >= MAX_INDICATORS:
            break
    principals = {i.value for i in found.values() if i.kind == "principal"}
    kept = [i for i in found.values() if not (i.kind == "email" and i.value in principals)]
    return kept[:MAX_INDICATORS]


def is_private_ip(value: str) -> bool:
    """True for addresses that are not globally routable (RFC 1918, loopback, ...), also
    when carried inside an IPv6 address (6to4, Teredo, NAT64, IPv4-mapped)."""
    return non_public_reason(ipaddress.ip_address(value)) is not None


def _strings(value: Any, key: str, context: str) -> Iterator[tuple[str, str, str]]:
    """(key, text, the keys above it) for every string in ``value``."""
    if isinstance(value, dict):
        inner = f"{context}.{key}".lower()[-120:] if key else context
        for k, v in value.items():
            yield from _strings(v, str(k), inner)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key, context)
    elif isinstance(value, str) and value:
        yield key, value, context


def _from_string(key: str, text: str, context: str = "") -> Iterator[Indicator]:
    lkey = key.lower()
    if any(h in lkey for h in _SKIP_KEY_HINTS):
        return
    if lkey in _PRINCIPAL_KEYS:
        principal = _principal(text)
        if principal:
            yield Indicator(kind="principal", value=principal)
    text = refang(text)
    for m in _ARN_RE.finditer(text):
        yield Indicator(kind="principal", value=m.group(0).rstrip(_TRAILING))
    yield from _urls_and_hosts(
        text,
        domain_key=any(h in lkey for h in _DOMAIN_KEY_HINTS),
        command=any(h in lkey for h in _COMMAND_KEY_HINTS),
    )
    for m in _EMAIL_RE.finditer(text):
        if _public_tld(m.group(0).rsplit(".", 1)[-1]):
            yield Indicator(kind="email", value=m.group(0).lower())
    yield from _ips(text)
    yield from _hashes(lkey, text, context)


def _principal(text: str) -> str | None:
    value = text.strip()
    lowered = value.lower()
    for prefix in _PRINCIPAL_PREFIXES:
        if lowered.startswith(prefix):
            value = value[len(prefix) :]
            break
    if value.lower() in _PLACEHOLDERS or len(value) > 200 or any(c.isspace() for c in value):
        return None
    return value.lower() if "@" in value else value


def _urls_and_hosts(text: str, *, domain_key: bool, command: bool) -> Iterator[Indicator]:
    for m in _URL_RE.finditer(text):
        url = m.group(0).rstrip(_TRAILING)
        host = _url_host(url)
        if host and _HOST_RE.match(host) and not _is_reference(host):
            yield Indicator(kind="url", value=url)
    for m in _DOMAIN_RE.finditer(text):
        domain = m.group(0).lower().rstrip(".")
        if _is_reference(domain) or domain.endswith(SERVICE_DOMAINS):
            continue
        labels = domain.split(".")
        tld = labels[-1]
        if _in_path(text, m.start()) or (command and _looks_like_file(labels, command=True)):
            continue  # a file: C:/Users/x/eicar.com, /Applications/Safari.app, "open app.app"
        if tld in INTERNAL_TLDS and domain_key:
            yield Indicator(kind="domain", value=domain, private=True)
        elif ipv4_in_host(domain) is not None:  # 10-0-0-1.nip.io: an internal address
            yield Indicator(kind="domain", value=domain, private=True)
        elif _public_tld(tld) and (domain_key or not _looks_like_file(labels)):
            yield Indicator(kind="domain", value=domain)


def _ips(text: str) -> Iterator[Indicator]:
    for m in _IPV4_RE.finditer(text):
        if _VERSION_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
            continue
        try:
            ip = ipaddress.IPv4Address(m.group(0))
        except ValueError:
            continue
        yield Indicator(kind="ipv4", value=str(ip), private=is_private_ip(str(ip)))
    for m in _IPV6_RE.finditer(text):
        candidate = m.group(0)
        if candidate == "::":
            continue
        try:
            ip6 = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        yield Indicator(kind="ipv6", value=str(ip6), private=is_private_ip(str(ip6)))


def _hashes(lkey: str, text: str, context: str) -> Iterator[Indicator]:
    """Hashes under a key that names the algorithm (``sha256``, ``MD5String``), or a
    ``hash`` key of a file or process (``file.hash``, ``process.hashes``), or in text
    after ``md5:``/``sha256``...

    Any other value that is nothing but 32/40/64 hex digits is an id (sensor,
    customer, request, device token hash), not a file hash; in running text a
    64-digit value is taken as a SHA-256.
    """
    hash_key = any(h in lkey for h in _HASH_NAMES) or (
        any(h in lkey for h in _HASH_KEY_HINTS)
        and any(w in f"{context}.{lkey}" for w in _FILE_CONTEXT)
    )
    whole = text.strip()
    for m in _HASH_RE.finditer(text):
        value = m.group(0).lower()
        prefixed = _HASH_PREFIX.search(text[max(0, m.start() - 10) : m.start()]) is not None
        if not (hash_key or prefixed or (len(value) == 64 and m.group(0) != whole)):
            continue
        if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            continue
        yield Indicator(kind=_HASH_KINDS[len(value)], value=value)


def _url_host(url: str) -> str | None:
    rest = url.split("://", 1)[1]
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    host = host[1:].split("]", 1)[0] if host.startswith("[") else host.split(":", 1)[0]
    return host.lower() or None


def _is_reference(host: str) -> bool:
    return any(host == d or host.endswith("." + d) for d in REFERENCE_DOMAINS)


def _public_tld(tld: str) -> bool:
    tld = tld.lower()
    return tld in PUBLIC_TLDS or tld.startswith("xn--")


def _looks_like_file(labels: list[str], *, command: bool = False) -> bool:
    extensions = COMMAND_FILE_EXTENSIONS if command else FILE_EXTENSIONS
    return len(labels) == 2 and labels[-1] in extensions


def _in_path(text: str, start: int) -> bool:
    """The name follows a path separator (not the ``//`` of a URL)."""
    before = text[max(0, start - 2) : start]
    return before[-1:] == "\\" or (before[-1:] == "/" and before != "//")
