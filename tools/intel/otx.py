"""AlienVault OTX DirectConnect API v1: the ``general`` section of an indicator.

Pulses are community reports that mention the indicator; OTX's ``validation``
list says when an indicator is on a known-good list (then it is not flagged).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import quote

from tools.intel.indicators import Target
from tools.intel.service import (
    IntelService,
    as_dict,
    as_int,
    as_list,
    as_str,
    malformed,
    strings,
)

BASE_URL = "https://otx.alienvault.com/api/v1/indicators"
MAX_PULSES = 5


class OTX(IntelService):
    name = "otx"
    env_var = "OTX_API_KEY"
    kinds = frozenset({"ip", "domain", "url", "hash"})

    async def lookup(self, target: Target) -> dict[str, Any]:
        section, value = _section(target)
        url = f"{BASE_URL}/{section}/{quote(value, safe=':/')}/general"
        body = await self.get_json(url, headers={"X-OTX-API-KEY": self.key()})
        if not isinstance(body, dict) or not isinstance(body.get("pulse_info"), dict):
            raise malformed(self.name, "no pulse_info")
        return reduce_general(section, value, body)


def reduce_general(section: str, value: str, body: dict[str, Any]) -> dict[str, Any]:
    """Pulse count, the most recent pulses, tags, malware families and adversaries."""
    info = as_dict(body.get("pulse_info"))
    pulses = [as_dict(p) for p in as_list(info.get("pulses"))]
    pulses.sort(key=lambda p: str(p.get("modified", "")), reverse=True)
    count = as_int(info.get("count")) or len(pulses)
    tags = Counter(t.lower() for p in pulses for t in strings(p.get("tags"), 50))
    families = [
        name
        for p in pulses
        for f in as_list(p.get("malware_families"))
        if (name := as_str(as_dict(f).get("display_name")) or as_str(f))
    ]
    adversaries = [a for p in pulses if (a := as_str(p.get("adversary")))]
    whitelisted = [
        as_str(as_dict(v).get("name")) or as_str(as_dict(v).get("source")) or "known-good list"
        for v in as_list(body.get("validation"))
    ]
    dates = sorted(str(p["created"]) for p in pulses if as_str(p.get("created")))
    result: dict[str, Any] = {
        "found": count > 0,
        "flagged": count > 0 and not whitelisted,
        "pulse_count": count,
        "pulses": [
            {
                "name": as_str(p.get("name")),
                "modified": _day(p.get("modified")),
                "tags": strings(p.get("tags"), 5),
            }
            for p in pulses[:MAX_PULSES]
        ],
        "tags": [t for t, _ in tags.most_common(10)],
        "malware_families": list(dict.fromkeys(families))[:5],
        "adversaries": list(dict.fromkeys(adversaries))[:5],
        "whitelisted_by": list(dict.fromkeys(whitelisted)),
        "first_pulse": dates[0][:10] if dates else None,
        "last_pulse": _day(pulses[0].get("modified")) if pulses else None,
        "reputation": body.get("reputation") if isinstance(body.get("reputation"), int) else None,
        "country": as_str(body.get("country_code")),
        "asn": as_str(body.get("asn")),
        "link": f"https://otx.alienvault.com/indicator/{_gui_section(section)}/{value}",
    }
    return {k: v for k, v in result.items() if v not in (None, [])}


def _day(value: Any) -> str | None:
    return value[:10] if isinstance(value, str) and value else None


def _section(target: Target) -> tuple[str, str]:
    if target.kind == "ip":
        return ("IPv4" if target.subtype == "ipv4" else "IPv6"), target.value
    if target.kind == "domain":  # a registered name vs. a host under it
        return ("domain" if target.value.count(".") == 1 else "hostname"), target.value
    if target.kind == "url":
        return "url", target.value
    return "file", target.value


def _gui_section(section: str) -> str:
    return {"IPv4": "ip", "IPv6": "ip", "file": "file"}.get(section, section)
