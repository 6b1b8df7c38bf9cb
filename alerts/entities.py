"""Entities of an alert: who (users, cloud principals), where (hosts), what ran
(processes, files, hashes), and the network (IPs, domains, URLs, emails).

A format names the entities it knows, with their role (``alerts.catalogue``);
``walk_entities`` adds those any payload carries under well-known keys
(``user.name``, ``actor.alternateId``, ``userIdentity.arn``, ``hostname``,
``CommandLine``, ``sha256``...), guessing the role from the key path (``src``,
``remote``, ``client`` → source; ``dst``, ``target`` → target). ``clean_entities``
validates and deduplicates: an IP must parse, a hash is hex of a hash's length and
only taken from a key that says hash, placeholders (``-``, ``N/A``) are dropped.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator
from typing import Any, get_args

from alerts.indicators import is_private_ip
from alerts.model import Entity, EntityKind, Indicator, IndicatorKind

MAX_ENTITIES = 60
MAX_NODES = 20_000
_MAX_VALUE = {"process": 1000, "url": 2000}
_PLACEHOLDERS = frozenset(
    {"", "-", "--", "n/a", "na", "none", "null", "unknown", "nil", "undefined", "(null)"}
)
_PRINCIPAL_PREFIXES = frozenset({"user", "serviceaccount", "group", "principal", "principalset"})
_HEX = re.compile(r"^[0-9a-f]+$", re.I)
_DOMAIN = re.compile(r"^(?=.{4,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[a-z0-9.-]+\.[a-z]{2,24}$", re.I)
_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_AWS_USER = re.compile(
    r"(?<![:\w/])(?:IAMUser|AssumedRole|FederatedUser)\s*[:/]\s*([\w+=,.@-]{1,64})(?![\w/])"
)
_HASH_LENGTHS: dict[int, IndicatorKind] = {32: "md5", 40: "sha1", 64: "sha256"}

# Key (last one or two path parts, lower-cased, without separators) → entity kind.
_USER_KEYS = frozenset(
    {
        "username",
        "user",
        "username.name",
        "user.name",
        "srcuser",
        "dstuser",
        "principalemail",
        "principalsubject",
        "actor.alternateid",
        "useridentity.arn",
        "userprincipalname",
        "upn",
        "samaccountname",
        "targetusername",
        "subjectusername",
        "loginname",
        "serviceaccountemail",
    }
)
_HOST_KEYS = frozenset(
    {
        "hostname",
        "host.name",
        "host",
        "computername",
        "computerdnsname",
        "devicename",
        "devicednsname",
        "machinename",
        "agent.name",
        "agentcomputername",
        "dvchost",
        "workstationname",
    }
)
_PROCESS_KEYS = frozenset(
    {"commandline", "cmdline", "processcommandline", "proc.cmdline", "process.commandline"}
)
_FILE_KEYS = frozenset({"file.path", "process.executable", "targetfilename", "imagepath"})
_HASH_NAMES = ("md5", "sha1", "sha256")
_FILE_WORDS = frozenset({"file", "files", "process", "proc", "image", "binary", "exe", "sample"})
_IP_HINTS = ("ip", "ipaddress", "ipv4", "ipv6", "ipaddressv4", "address", "addr")
_SOURCE_WORDS = frozenset(
    {"src", "source", "remote", "client", "caller", "actor", "attacker", "external", "initiator"}
)
_TARGET_WORDS = frozenset({"dst", "dest", "destination", "target", "victim", "affected"})
_CONTAINERS = frozenset({"sourceproperties", "source_properties", "_source"})
_TYPE_KEYS = frozenset({"type", "types", "findingtype", "finding_type"})

Candidate = tuple[str, str, str | None]  # kind, value, role


def walk_entities(data: Any) -> list[Candidate]:
    """Entities found under well-known keys anywhere in ``data``."""
    out: list[Candidate] = []
    for path, value in _leaves(data):
        out += _from_leaf(path, value)
    return out


def clean_entities(candidates: Iterable[Candidate]) -> list[Entity]:
    """Valid, deduplicated entities, the first role given to a value kept."""
    kinds = set(get_args(EntityKind))
    seen: dict[tuple[str, str], Entity] = {}
    for kind, raw, role in candidates:
        value = _valid(kind, raw.strip()) if kind in kinds else None
        if value is None:
            continue
        key = (kind, value.lower())
        if key not in seen:
            seen[key] = Entity(kind=kind, value=value, role=role)  # type: ignore[arg-type]
        elif seen[key].role is None and role:
            seen[key] = seen[key].model_copy(update={"role": role})
        if len(seen) >= MAX_ENTITIES:
            break
    return list(seen.values())


def entity_indicators(entities: Iterable[Entity]) -> list[Indicator]:
    """The indicators (what tools look up) that entities carry."""
    out: list[Indicator] = []
    for e in entities:
        if e.kind == "ip":
            ip = ipaddress.ip_address(e.value)
            kind: IndicatorKind = "ipv4" if ip.version == 4 else "ipv6"
            out.append(Indicator(kind=kind, value=e.value, private=is_private_ip(e.value)))
        elif e.kind in ("domain", "url", "email"):
            out.append(Indicator(kind=e.kind, value=e.value))  # type: ignore[arg-type]
        elif e.kind == "hash":
            out.append(Indicator(kind=_HASH_LENGTHS[len(e.value)], value=e.value))
        elif e.kind == "user" and not any(c.isspace() for c in e.value):
            out.append(Indicator(kind="principal", value=e.value))
    return out


def _leaves(data: Any) -> Iterator[tuple[list[str], Any]]:
    stack: list[tuple[list[str], Any]] = [([], data)]
    nodes = 0
    while stack and nodes < MAX_NODES:
        path, value = stack.pop(0)
        nodes += 1
        if isinstance(value, dict):
            stack += [([*path, str(k)], v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(path, v) for v in value]
        elif isinstance(value, str) and path:
            yield path, value


def _norm(part: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", part.lower())


def _from_leaf(path: list[str], value: str) -> list[Candidate]:
    parts = [_norm(p) for p in path]
    last = parts[-1]
    keys = {last, ".".join(parts[-2:])}
    # Flattened keys such as Falco's "proc.cmdline" count as paths too.
    keys |= {".".join(last.split(".")[-2:]), last.split(".")[-1]} if "." in last else set()
    role = _role(path)
    if keys & _USER_KEYS:
        return [("user", value, "target" if role == "target" else "actor")]
    if keys & _HOST_KEYS:
        return [("host", value, role)]
    if keys & _PROCESS_KEYS:
        return [("process", value, "parent" if "parent" in last else role)]
    if keys & _FILE_KEYS:
        return [("file", value, role)]
    if _hash_key(path, last):
        return [("hash", value, role)]
    if "email" in last:
        return [("email", value, role)]
    if last.split(".")[-1].endswith(_IP_HINTS):
        return [("ip", _strip_port(value), role)]
    if last.split(".")[-1] not in _TYPE_KEYS:
        return [("user", m.group(1), "actor") for m in _AWS_USER.finditer(value)]
    return []


def _hash_key(path: list[str], last: str) -> bool:
    """A file's or process's hash: ``sha256``, ``MD5String``, ``file.hash.sha1``..."""
    if any(name in last for name in _HASH_NAMES):
        return True
    words = {w.lower() for part in path for w in _TOKEN.findall(part)}
    return "hash" in last and bool(words & _FILE_WORDS)


def _role(path: list[str]) -> str | None:
    """source/target from the key or its parent: ``remoteIpDetails.ipAddressV4``, ``dstuser``."""
    for part in reversed([p for p in path[-2:] if p.lower() not in _CONTAINERS]):
        words = {w.lower() for w in _TOKEN.findall(part)}
        words |= {w[:3] for w in words if w.startswith(("src", "dst"))}
        if words & _SOURCE_WORDS:
            return "source"
        if words & _TARGET_WORDS:
            return "target"
    return None


def _strip_port(value: str) -> str:
    host, sep, port = value.strip().rpartition(":")
    return host if sep and port.isdigit() and host.count(":") == 0 else value


def _valid(kind: str, value: str) -> str | None:
    if value.lower() in _PLACEHOLDERS or len(value) > _MAX_VALUE.get(kind, 255):
        return None
    if kind == "ip":
        try:
            return str(ipaddress.ip_address(_strip_port(value)))
        except ValueError:
            return None
    if kind == "hash":
        ok = _HEX.match(value) and len(value) in _HASH_LENGTHS and value.strip("0")
        return value.lower() if ok else None
    if kind == "domain":
        value = value.lower().rstrip(".")
        return value if _DOMAIN.match(value) else None
    if kind == "email":
        return value.lower() if _EMAIL.match(value) else None
    if kind == "url":
        return value if "://" in value and " " not in value else None
    if kind in ("user", "host") and (value.isdigit() or "\n" in value):
        return None
    if kind == "user":
        prefix, sep, rest = value.partition(":")
        if sep and prefix.lower() in _PRINCIPAL_PREFIXES and rest.strip():
            return _valid(kind, rest.strip().removeprefix("//"))
    return value
