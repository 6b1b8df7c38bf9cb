"""Fake threat-intel services with latency: a local aiohttp server and a redirecting transport.

socbot's intel services call fixed public URLs (``https://api.abuseipdb.com/...``,
``https://otx.alienvault.com/...``). For the benchmarks the shared
``httpx.AsyncClient`` gets a ``RedirectTransport``: a request to one of those hosts
is sent instead to ``http://127.0.0.1:<port>/<host>/<path>`` — this server — which
waits ``latency_s`` and answers in the service's JSON shape. Everything else
(the fake Gemini on 127.0.0.1) passes through untouched. The real intel code
(HTTP call, 429 handling, reduction, cache) stays in the measured path; no respx.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from aiohttp import web

from bench.loopback import serve

INTEL_HOSTS = frozenset(
    {"api.abuseipdb.com", "otx.alienvault.com", "www.virustotal.com", "urlscan.io"}
)
BAD_IPS = {"185.220.101.42", "195.123.245.89"}


@dataclass
class IntelCall:
    host: str
    path: str
    start: float
    end: float


@dataclass
class FakeIntel:
    """AbuseIPDB ``check`` and OTX ``general`` with a fixed latency per request."""

    latency_s: float = 0.15
    calls: list[IntelCall] = field(default_factory=list)
    base_url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/{host}/{path:.*}", self._serve)
        self._runner, self.base_url = await serve(app)
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _serve(self, request: web.Request) -> web.Response:
        start = time.monotonic()
        host, path = request.match_info["host"], request.match_info["path"]
        await asyncio.sleep(self.latency_s)
        if host == "api.abuseipdb.com":
            body = _abuseipdb(request.query.get("ipAddress", ""))
        elif host == "otx.alienvault.com":
            body = _otx(path)
        else:
            self.calls.append(IntelCall(host, path, start, time.monotonic()))
            return web.json_response({"error": {"message": "not found"}}, status=404)
        self.calls.append(IntelCall(host, path, start, time.monotonic()))
        return web.json_response(body)


def _abuseipdb(ip: str) -> dict[str, Any]:
    bad = ip in BAD_IPS
    return {
        "data": {
            "ipAddress": ip,
            "abuseConfidenceScore": 100 if bad else 0,
            "totalReports": 812 if bad else 0,
            "numDistinctUsers": 143 if bad else 0,
            "lastReportedAt": "2025-11-08T04:12:55+00:00" if bad else None,
            "countryCode": "RO" if bad else "US",
            "isp": "Example Hosting SRL" if bad else "Example ISP",
            "usageType": "Data Center/Web Hosting/Transit",
            "domain": "example-hosting.test",
            "isTor": ip == "185.220.101.42",
            "isWhitelisted": False,
        }
    }


def _otx(path: str) -> dict[str, Any]:
    parts = path.split("/")  # api/v1/indicators/<section>/<value>/general
    value = parts[4] if len(parts) > 4 else ""
    bad = value in BAD_IPS or "malicious" in value or "minexmr" in value
    pulses = [
        {
            "name": f"Cryptomining infrastructure {i}",
            "modified": f"2025-11-0{i + 1}T10:00:00",
            "created": f"2025-10-2{i}T10:00:00",
            "tags": ["xmrig", "monero", "mining-pool"],
            "malware_families": [{"display_name": "XMRig"}],
            "adversary": "",
        }
        for i in range(3 if bad else 0)
    ]
    return {
        "pulse_info": {"count": len(pulses), "pulses": pulses},
        "validation": [],
        "reputation": 0,
        "country_code": "RO" if bad else None,
        "asn": "AS60729 Example Hosting",
    }


class RedirectTransport(httpx.AsyncBaseTransport):
    """Sends requests for the intel hosts to the local fake; others go out unchanged."""

    def __init__(self, fake_base_url: str) -> None:
        self.target = httpx.URL(fake_base_url)
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host in INTEL_HOSTS:
            request.url = request.url.copy_with(
                scheme=self.target.scheme,
                host=self.target.host,
                port=self.target.port,
                path=f"/{request.url.host}{request.url.path}",
            )
            request.headers["Host"] = f"{self.target.host}:{self.target.port}"
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
