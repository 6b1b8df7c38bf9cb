"""urlscan.io Search API: earlier public scans that saw an IP, domain, URL or file.

Only ``GET /api/v1/search/`` is used. socbot never submits a scan: a submission
would publish the URL and could alert an attacker.
"""

from __future__ import annotations

from typing import Any

from tools.intel.indicators import Target
from tools.intel.service import (
    IntelService,
    as_dict,
    as_int,
    as_list,
    as_str,
    malformed,
)

SEARCH_URL = "https://urlscan.io/api/v1/search/"
PAGE_SIZE = 10
MAX_SCANS = 5


class URLScan(IntelService):
    name = "urlscan"
    env_var = "URLSCAN_API_KEY"
    kinds = frozenset({"ip", "domain", "url", "hash"})

    def supports(self, target: Target) -> bool:
        # urlscan indexes the sha256 of every response body, not md5/sha1.
        return target.kind != "hash" or target.subtype == "sha256"

    async def lookup(self, target: Target) -> dict[str, Any]:
        body = await self.get_json(
            SEARCH_URL,
            headers={"API-Key": self.key()},
            params={"q": search_query(target), "size": str(PAGE_SIZE)},
        )
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise malformed(self.name, "no results list")
        return reduce_search(target, body)


def search_query(target: Target) -> str:
    """The Elasticsearch query string for one indicator (values quoted and escaped)."""
    quoted = '"' + target.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    field = {"ip": "ip", "domain": "domain", "url": "page.url", "hash": "hash"}[target.kind]
    return f"{field}:{quoted}"


def reduce_search(target: Target, body: dict[str, Any]) -> dict[str, Any]:
    """How often and when the indicator was seen in scans, and the latest few scans."""
    results = [as_dict(r) for r in as_list(body.get("results"))]
    scans = [_scan(r) for r in results]
    times = sorted(t for s in scans if (t := s.get("time")))
    malicious = sum(1 for s in scans if s.get("malicious") is True)
    total = as_int(body.get("total")) or len(results)
    result: dict[str, Any] = {
        "found": total > 0,
        "flagged": malicious > 0,
        "total_scans": total,
        "malicious_scans": malicious,
        "first_seen": times[0] if times else None,
        "last_seen": times[-1] if times else None,
        "scans": scans[:MAX_SCANS],
        "note": f"first/last seen over the {len(results)} most recent scans" if results else None,
        "link": f"https://urlscan.io/search/#{search_query(target)}",
    }
    return {k: v for k, v in result.items() if v is not None}


def _scan(result: dict[str, Any]) -> dict[str, Any]:
    task, page = as_dict(result.get("task")), as_dict(result.get("page"))
    verdicts = as_dict(result.get("verdicts"))
    overall = as_dict(verdicts.get("overall")) or verdicts
    scan = {
        "time": as_str(task.get("time")),
        "url": as_str(page.get("url")) or as_str(task.get("url")),
        "domain": as_str(page.get("domain")),
        "ip": as_str(page.get("ip")),
        "country": as_str(page.get("country")),
        "asn": as_str(page.get("asnname")) or as_str(page.get("asn")),
        "status": page.get("status"),
        "malicious": overall.get("malicious")
        if isinstance(overall.get("malicious"), bool)
        else None,
        "result": f"https://urlscan.io/result/{result['_id']}/"
        if as_str(result.get("_id"))
        else None,
    }
    return {k: v for k, v in scan.items() if v is not None}
