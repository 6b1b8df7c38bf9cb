"""Threat intel for the demo: AbuseIPDB answered from recorded data, nothing else reachable.

``recorded_intel`` is an ``httpx`` transport for the shared client: a ``check`` of an
address in ``examples/demo/intel.json`` gets its recorded answer, any other address
AbuseIPDB's 404; a request to any other host fails as an unreachable network would.
The real intel code (egress gate, service, reduction, cache) runs unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

ABUSEIPDB_HOST = "api.abuseipdb.com"


def recorded_intel(path: Path) -> httpx.MockTransport:
    """A transport answering AbuseIPDB ``check`` from the recordings in ``path``."""
    recordings: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["abuseipdb"]

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host != ABUSEIPDB_HOST:
            raise httpx.ConnectError("socbot demo makes no network connections", request=request)
        recorded = recordings.get(request.url.params.get("ipAddress", ""))
        if recorded is None:
            return httpx.Response(404, json={"errors": [{"detail": "not in the demo's data"}]})
        return httpx.Response(200, json=recorded)

    return httpx.MockTransport(answer)
