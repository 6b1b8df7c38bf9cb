"""VirusTotal API v3: IP, domain, URL and file reports (lookups only, never uploads)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from tools.intel.indicators import Target
from tools.intel.service import (
    IntelService,
    as_dict,
    as_int,
    as_str,
    epoch_iso,
    malformed,
    strings,
)

BASE_URL = "https://www.virustotal.com/api/v3"
GUI_URL = "https://www.virustotal.com/gui"
FLAG_MIN_MALICIOUS = 2  # one engine alone is often a false positive
_PATHS = {"ip": "ip_addresses", "domain": "domains", "url": "urls", "hash": "files"}
_GUI = {"ip": "ip-address", "domain": "domain", "url": "url", "hash": "file"}


class VirusTotal(IntelService):
    name = "virustotal"
    env_var = "VIRUSTOTAL_API_KEY"
    kinds = frozenset({"ip", "domain", "url", "hash"})

    async def lookup(self, target: Target) -> dict[str, Any]:
        url = f"{BASE_URL}/{_PATHS[target.kind]}/{_object_id(target)}"
        body = await self.get_json(url, headers={"x-apikey": self.key()})
        attrs = as_dict(as_dict(as_dict(body).get("data")).get("attributes"))
        if not attrs:
            raise malformed(self.name, "no data.attributes")
        return reduce_report(target, attrs)


def reduce_report(target: Target, attrs: dict[str, Any]) -> dict[str, Any]:
    """Detections, reputation and the kind-specific fields an analyst reads first."""
    stats = as_dict(attrs.get("last_analysis_stats"))
    malicious = as_int(stats.get("malicious"))
    result: dict[str, Any] = {
        "found": True,
        "flagged": malicious >= FLAG_MIN_MALICIOUS,
        "malicious": malicious,
        "suspicious": as_int(stats.get("suspicious")),
        "harmless": as_int(stats.get("harmless")),
        "undetected": as_int(stats.get("undetected")),
        "reputation": as_int(attrs.get("reputation")),
        "detections": _detections(as_dict(attrs.get("last_analysis_results"))),
        "tags": strings(attrs.get("tags"), 10),
        "last_analysis": epoch_iso(attrs.get("last_analysis_date")),
    }
    if target.kind == "ip":
        result |= {
            "country": as_str(attrs.get("country")),
            "asn": attrs.get("asn"),
            "as_owner": as_str(attrs.get("as_owner")),
            "network": as_str(attrs.get("network")),
        }
    elif target.kind == "domain":
        categories = as_dict(attrs.get("categories")).values()
        result |= {
            "registrar": as_str(attrs.get("registrar")),
            "created": epoch_iso(attrs.get("creation_date")),
            "categories": strings(sorted({c for c in categories if isinstance(c, str)}), 5),
        }
    elif target.kind == "url":
        result |= {
            "final_url": as_str(attrs.get("last_final_url")),
            "title": as_str(attrs.get("title")),
            "first_seen": epoch_iso(attrs.get("first_submission_date")),
            "last_seen": epoch_iso(attrs.get("last_submission_date")),
        }
    else:
        threat = as_dict(attrs.get("popular_threat_classification"))
        result |= {
            "threat_label": as_str(threat.get("suggested_threat_label")),
            "file_type": as_str(attrs.get("type_description")),
            "size": attrs.get("size"),
            "names": strings(attrs.get("names"), 5),
            "first_seen": epoch_iso(attrs.get("first_submission_date")),
            "last_seen": epoch_iso(attrs.get("last_submission_date")),
        }
    result["link"] = f"{GUI_URL}/{_GUI[target.kind]}/{_gui_id(target)}"
    return {k: v for k, v in result.items() if v is not None}


def _detections(results: dict[str, Any], limit: int = 8) -> list[str]:
    out = []
    for engine, verdict in results.items():
        v = as_dict(verdict)
        if v.get("category") in ("malicious", "suspicious"):
            out.append(f"{engine}: {as_str(v.get('result')) or v.get('category')}")
        if len(out) >= limit:
            break
    return out


def _object_id(target: Target) -> str:
    if target.kind == "url":  # VirusTotal's URL identifier: unpadded base64url of the URL
        return base64.urlsafe_b64encode(target.value.encode()).decode().rstrip("=")
    return target.value


def _gui_id(target: Target) -> str:
    if target.kind == "url":
        return hashlib.sha256(target.value.encode()).hexdigest()
    return target.value
