"""AbuseIPDB API v2 ``check``: abuse confidence and report history of an IP address."""

from __future__ import annotations

from typing import Any

from tools.intel.indicators import Target
from tools.intel.service import IntelService, as_dict, as_int, as_str, malformed

CHECK_URL = "https://api.abuseipdb.com/api/v2/check"
MAX_AGE_DAYS = 90
FLAG_MIN_SCORE = 50


class AbuseIPDB(IntelService):
    name = "abuseipdb"
    env_var = "ABUSEIPDB_API_KEY"
    kinds = frozenset({"ip"})

    async def lookup(self, target: Target) -> dict[str, Any]:
        body = await self.get_json(
            CHECK_URL,
            headers={"Key": self.key(), "Accept": "application/json"},
            params={"ipAddress": target.value, "maxAgeInDays": str(MAX_AGE_DAYS)},
        )
        data = as_dict(as_dict(body).get("data"))
        if "abuseConfidenceScore" not in data:
            raise malformed(self.name, "no data.abuseConfidenceScore")
        return reduce_check(target, data)


def reduce_check(target: Target, data: dict[str, Any]) -> dict[str, Any]:
    """Score, reports in the last 90 days and who operates the address."""
    score = as_int(data.get("abuseConfidenceScore"))
    reports = as_int(data.get("totalReports"))
    result: dict[str, Any] = {
        "found": reports > 0,
        "flagged": score >= FLAG_MIN_SCORE,
        "abuse_confidence_score": score,
        "total_reports": reports,
        "distinct_reporters": as_int(data.get("numDistinctUsers")),
        "last_reported": as_str(data.get("lastReportedAt")),
        "country": as_str(data.get("countryCode")),
        "isp": as_str(data.get("isp")),
        "usage_type": as_str(data.get("usageType")),
        "domain": as_str(data.get("domain")),
        "is_tor": data.get("isTor") is True,
        "is_whitelisted": data.get("isWhitelisted") is True,
        "window_days": MAX_AGE_DAYS,
        "link": f"https://www.abuseipdb.com/check/{target.value}",
    }
    return {k: v for k, v in result.items() if v is not None}
