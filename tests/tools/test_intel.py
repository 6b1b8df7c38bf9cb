"""Threat-intel tools over respx: every service, success, not found, 429, malformed, timeout.

The real tools run through the real registry, cache (SQLite) and shared httpx client;
only the HTTP edge is faked, with payloads in tests/fixtures/intel shaped like the
services' documented responses.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from config.settings import IntelSettings, Settings
from store.db.engine import Database
from tests.fakes.signals import WAIT_S
from tools import intel
from tools.base import Budget, ToolError, ToolRegistry, ToolResult
from tools.intel.cache import IntelCache
from tools.intel.indicators import Target, validate_ip
from tools.intel.lookup import IntelDeps, lookup
from tools.intel.service import HttpPolicy, retry_after
from tools.intel.virustotal import VirusTotal

FIXTURES = Path(__file__).parents[1] / "fixtures" / "intel"
KEYS = {
    "otx": "otx-test-key-0001",
    "virustotal": "vt-test-key-0002",
    "abuseipdb": "abuse-test-key-0003",
    "urlscan": "urlscan-test-key-0004",
}
IP = "185.220.101.42"
VT = "https://www.virustotal.com/api/v3"
OTX = "https://otx.alienvault.com/api/v1/indicators"
ABUSE = "https://api.abuseipdb.com/api/v2/check"
URLSCAN = "https://urlscan.io/api/v1/search/"
SHA256 = "3f1b2e6c9a2fbf5d7e8a4c1b0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e"


def payload(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def settings(*services: str, **intel_overrides: Any) -> Settings:
    keys = {f"{s}_api_key": SecretStr(KEYS[s]) for s in services}
    return Settings(intel=IntelSettings(**keys, **intel_overrides))


class Sleeps:
    """Records requested back-off instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def build(db: Database, http: httpx.AsyncClient, sleeps: Sleeps) -> Any:
    def _build(cfg: Settings) -> ToolRegistry:
        registry = ToolRegistry(result_chars=100_000)
        # respx answers in-process and does not enforce httpx's timeout: the 2 s only
        # names itself in the "timed out" message (the time-out case is a scripted
        # ReadTimeout), so no test here depends on the clock.
        policy = HttpPolicy(timeout_s=2.0, max_retry_after_s=10.0, sleep=sleeps)
        intel.register(registry, cfg, db, http, policy=policy)
        return registry

    return _build


async def call(registry: ToolRegistry, name: str, **args: Any) -> ToolResult:
    return await registry.dispatch(
        name, args, allowed=registry.names(), investigation_id="inv-test", budget=Budget()
    )


# --- registration -------------------------------------------------------------------


def test_nothing_configured_disables_every_lookup_with_the_variables_to_set(build: Any) -> None:
    registry = build(settings())
    assert registry.names() == []
    assert registry.disabled["lookup_ip"] == (
        "no threat-intel service configured (set OTX_API_KEY, VIRUSTOTAL_API_KEY, "
        "ABUSEIPDB_API_KEY or URLSCAN_API_KEY)"
    )
    assert "ABUSEIPDB" not in registry.disabled["lookup_hash"]


def test_only_configured_services_back_a_tool(build: Any) -> None:
    registry = build(settings("abuseipdb"))
    assert registry.names() == ["lookup_ip"]
    assert registry.tools["lookup_ip"].description.endswith("Services: abuseipdb.")
    assert set(registry.disabled) == {"lookup_domain", "lookup_url", "lookup_hash"}
    decl = registry.declarations(["lookup_ip"])[0]
    assert decl.parameters_json_schema == {
        "type": "object",
        "properties": {"ip": {"type": "string", "description": "a public IPv4 or IPv6 address"}},
        "required": ["ip"],
    }


def test_blank_key_counts_as_not_set() -> None:
    cfg = Settings(intel=IntelSettings(virustotal_api_key=SecretStr("  ")))
    status = {s.name: s.configured for s in intel.service_status(cfg)}
    assert status == {"otx": False, "virustotal": False, "abuseipdb": False, "urlscan": False}


# --- success ------------------------------------------------------------------------


async def test_lookup_ip_fans_out_to_every_service(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    with respx.mock() as router:
        vt = router.get(f"{VT}/ip_addresses/{IP}").respond(200, json=payload("virustotal_ip.json"))
        otx = router.get(f"{OTX}/IPv4/{IP}/general").respond(
            200, json=payload("otx_ipv4_general.json")
        )
        abuse = router.get(ABUSE).respond(200, json=payload("abuseipdb_check.json"))
        scan = router.get(URLSCAN).respond(200, json=payload("urlscan_search.json"))
        result = await call(registry, "lookup_ip", ip=IP)

    assert result.ok
    data = result.data
    assert data["indicator"] == IP and data["type"] == "ipv4"
    assert data["flagged_by"] == ["otx", "virustotal", "abuseipdb", "urlscan"]
    services = data["services"]
    assert services["virustotal"] == {
        "found": True,
        "flagged": True,
        "malicious": 12,
        "suspicious": 2,
        "harmless": 55,
        "undetected": 25,
        "reputation": -41,
        "detections": [
            "Fortinet: malware",
            "BitDefender: malware",
            "CRDF: malicious",
            "Sophos: suspicious",
        ],
        "tags": ["tor"],
        "last_analysis": "2024-11-18T11:40:00Z",
        "country": "DE",
        "asn": 60729,
        "as_owner": "Stiftung Erneuerbare Freiheit",
        "network": "185.220.101.0/24",
        "link": f"https://www.virustotal.com/gui/ip-address/{IP}",
    }
    assert services["abuseipdb"]["abuse_confidence_score"] == 100
    assert services["abuseipdb"]["total_reports"] == 2417
    assert services["abuseipdb"]["is_tor"] is True
    assert services["abuseipdb"]["last_reported"] == "2025-11-21T23:41:07+00:00"
    otx_result = services["otx"]
    assert otx_result["pulse_count"] == 27
    assert otx_result["pulses"][0]["name"] == "Tor exit nodes - brute force sources"
    assert otx_result["tags"][0] == "tor"
    assert otx_result["malware_families"] == ["XMRig"]
    assert otx_result["adversaries"] == ["TeamTNT"]
    assert otx_result["first_pulse"] == "2023-10-31" and otx_result["last_pulse"] == "2025-11-20"
    assert services["urlscan"]["total_scans"] == 2
    assert services["urlscan"]["first_seen"] == "2025-11-02T18:03:12.001Z"
    assert services["urlscan"]["last_seen"] == "2025-11-09T10:21:33.412Z"
    assert services["urlscan"]["malicious_scans"] == 1

    # Each key travels in its service's header only; the search is a GET, never a scan.
    assert vt.calls.last.request.headers["x-apikey"] == KEYS["virustotal"]
    assert otx.calls.last.request.headers["X-OTX-API-KEY"] == KEYS["otx"]
    assert abuse.calls.last.request.headers["Key"] == KEYS["abuseipdb"]
    assert abuse.calls.last.request.url.params["ipAddress"] == IP
    assert scan.calls.last.request.headers["API-Key"] == KEYS["urlscan"]
    assert scan.calls.last.request.url.params["q"] == f'ip:"{IP}"'
    assert all(c.request.method == "GET" for c in router.calls)
    assert not any(k in result.as_json() for k in KEYS.values())


async def test_services_are_asked_concurrently(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    arrived: list[str] = []
    everyone = asyncio.Event()

    async def barrier(request: httpx.Request) -> httpx.Response:
        arrived.append(request.url.host)
        if len(arrived) == 4:
            everyone.set()
        # all four wait here for each other: sequential calls would never get past it
        await asyncio.wait_for(everyone.wait(), timeout=WAIT_S)
        return httpx.Response(503)

    with respx.mock() as router:
        router.route().mock(side_effect=barrier)
        result = await call(registry, "lookup_ip", ip=IP)
    assert sorted(arrived) == [
        "api.abuseipdb.com",
        "otx.alienvault.com",
        "urlscan.io",
        "www.virustotal.com",
    ]
    assert result.data["failed"] == ["otx", "virustotal", "abuseipdb", "urlscan"]


async def test_lookup_domain_uses_hostname_section_for_subdomains(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/domains/pool.minexmr.com").respond(
            200, json=payload("virustotal_domain.json")
        )
        otx = router.get(f"{OTX}/hostname/pool.minexmr.com/general").respond(
            200, json=payload("otx_ipv4_general.json")
        )
        scan = router.get(URLSCAN).respond(200, json=payload("urlscan_search_empty.json"))
        result = await call(registry, "lookup_domain", domain="Pool.MineXMR.com.")
    assert result.ok and result.data["indicator"] == "pool.minexmr.com"
    vt = result.data["services"]["virustotal"]
    assert vt["registrar"] == "NameCheap, Inc."
    assert vt["created"] == "2017-05-18T00:00:00Z"
    assert vt["categories"] == ["miscellaneous", "potentially unwanted software"]
    assert result.data["services"]["urlscan"] == {
        "found": False,
        "flagged": False,
        "total_scans": 0,
        "malicious_scans": 0,
        "scans": [],
        "link": 'https://urlscan.io/search/#domain:"pool.minexmr.com"',
    }
    assert otx.called and scan.calls.last.request.url.params["q"] == 'domain:"pool.minexmr.com"'


async def test_lookup_domain_known_good_is_not_flagged(build: Any) -> None:
    registry = build(settings("otx"))
    with respx.mock() as router:
        router.get(f"{OTX}/domain/google.com/general").respond(
            200, json=payload("otx_domain_general_clean.json")
        )
        result = await call(registry, "lookup_domain", domain="google.com")
    assert result.data["services"]["otx"] == {
        "found": False,
        "flagged": False,
        "pulse_count": 0,
        "whitelisted_by": ["Listed on Alexa", "Whitelisted domain"],
        "link": "https://otx.alienvault.com/indicator/domain/google.com",
    }
    assert result.data["flagged_by"] == []


async def test_lookup_url(build: Any) -> None:
    url = "http://malicious-cdn.com/xmrig"
    vt_id = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    registry = build(settings("otx", "virustotal", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/urls/{vt_id}").respond(200, json=payload("virustotal_url.json"))
        otx = router.get(url__startswith=f"{OTX}/url/").respond(404, json={"detail": "Not found"})
        scan = router.get(URLSCAN).respond(200, json=payload("urlscan_search.json"))
        result = await call(registry, "lookup_url", url="hxxp://malicious-cdn[.]com/xmrig")
    assert result.ok and result.data["indicator"] == url
    services = result.data["services"]
    assert services["virustotal"]["malicious"] == 9
    assert services["virustotal"]["first_seen"] == "2024-10-27T03:33:20Z"
    assert services["otx"] == {"found": False, "flagged": False}
    assert otx.calls.last.request.url.raw_path.startswith(b"/api/v1/indicators/url/http://")
    assert scan.calls.last.request.url.params["q"] == f'page.url:"{url}"'
    assert services["urlscan"]["scans"][0] == {
        "time": "2025-11-09T10:21:33.412Z",
        "url": url,
        "domain": "malicious-cdn.com",
        "ip": "195.123.245.89",
        "country": "NL",
        "asn": "SERVERIUS-AS, NL",
        "status": "200",
        "malicious": True,
        "result": "https://urlscan.io/result/0196a2f3-7c1e-7000-8a4b-1c2d3e4f5a6b/",
    }


async def test_lookup_hash(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/files/{SHA256}").respond(200, json=payload("virustotal_file.json"))
        router.get(f"{OTX}/file/{SHA256}/general").respond(
            200, json=payload("otx_ipv4_general.json")
        )
        scan = router.get(URLSCAN).respond(200, json=payload("urlscan_search_empty.json"))
        result = await call(registry, "lookup_hash", hash=f"SHA256:{SHA256.upper()}")
    vt = result.data["services"]["virustotal"]
    assert vt["threat_label"] == "miner.xmrig/coinminer"
    assert vt["names"] == ["xmrig", "xmrig-6.21.0-linux-static-x64", "kworker"]
    assert vt["file_type"] == "ELF" and vt["size"] == 7784232
    assert vt["first_seen"] == "2023-12-01T00:00:00Z"
    assert scan.calls.last.request.url.params["q"] == f'hash:"{SHA256}"'


async def test_md5_is_not_sent_to_urlscan(build: Any) -> None:
    md5 = "5d41402abc4b2a76b9719d911017c592"
    registry = build(settings("virustotal", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/files/{md5}").respond(404, json=payload("virustotal_not_found.json"))
        result = await call(registry, "lookup_hash", hash=md5)
    assert list(result.data["services"]) == ["virustotal"]
    assert result.data["services"]["virustotal"] == {"found": False, "flagged": False}


# --- not found ----------------------------------------------------------------------


async def test_not_found_for_each_service(build: Any) -> None:
    ip = "81.2.69.160"
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/ip_addresses/{ip}").respond(
            404, json=payload("virustotal_not_found.json")
        )
        router.get(f"{OTX}/IPv4/{ip}/general").respond(404, json={"detail": "Not found."})
        router.get(ABUSE).respond(200, json=payload("abuseipdb_check_clean.json"))
        router.get(URLSCAN).respond(200, json=payload("urlscan_search_empty.json"))
        result = await call(registry, "lookup_ip", ip=ip)
    assert result.ok and result.data["flagged_by"] == []
    assert {name: r["found"] for name, r in result.data["services"].items()} == {
        "otx": False,
        "virustotal": False,
        "abuseipdb": False,
        "urlscan": False,
    }
    assert result.data["services"]["abuseipdb"]["isp"] == "Andrews & Arnold Ltd"


# --- failures -----------------------------------------------------------------------


async def test_429_retried_once_after_retry_after(build: Any, sleeps: Sleeps) -> None:
    registry = build(settings("abuseipdb"))
    with respx.mock() as router:
        route = router.get(ABUSE)
        route.side_effect = [
            httpx.Response(
                429, headers={"Retry-After": "3"}, json=payload("abuseipdb_rate_limit.json")
            ),
            httpx.Response(200, json=payload("abuseipdb_check.json")),
        ]
        result = await call(registry, "lookup_ip", ip=IP)
    assert result.ok and route.call_count == 2
    assert sleeps.calls == [3.0]
    assert result.data["services"]["abuseipdb"]["abuse_confidence_score"] == 100


async def test_429_beyond_the_bound_is_an_error_without_waiting(build: Any, sleeps: Sleeps) -> None:
    registry = build(settings("virustotal", "abuseipdb"))
    with respx.mock() as router:
        vt = router.get(f"{VT}/ip_addresses/{IP}").respond(
            429, headers={"Retry-After": "3600"}, json=payload("virustotal_quota.json")
        )
        router.get(ABUSE).respond(200, json=payload("abuseipdb_check.json"))
        result = await call(registry, "lookup_ip", ip=IP)
    assert vt.call_count == 1 and sleeps.calls == []
    assert result.data["services"]["virustotal"] == {
        "error": "virustotal rate limit reached; retry after 3600s"
    }
    assert result.data["failed"] == ["virustotal"]
    assert result.ok  # AbuseIPDB still answered
    assert result.data["services"]["abuseipdb"]["found"] is True


@pytest.mark.parametrize("second_retry_after", ["1", None])
async def test_429_twice_or_without_retry_after_is_an_error(
    build: Any, sleeps: Sleeps, second_retry_after: str | None
) -> None:
    registry = build(settings("abuseipdb"))
    with respx.mock() as router:
        route = router.get(ABUSE)
        if second_retry_after is None:
            route.respond(429, json=payload("abuseipdb_rate_limit.json"))
        else:
            route.respond(429, headers={"Retry-After": second_retry_after})
        result = await call(registry, "lookup_ip", ip=IP)
    assert not result.ok
    assert result.data["services"]["abuseipdb"]["error"].startswith("abuseipdb rate limit reached")
    assert result.data["error"].startswith("every threat-intel service failed")
    assert route.call_count == (2 if second_retry_after else 1)
    assert sleeps.calls == ([1.0] if second_retry_after else [])


async def test_malformed_responses_are_errors_for_that_service_only(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/ip_addresses/{IP}").respond(200, text="<html>gateway</html>")
        router.get(f"{OTX}/IPv4/{IP}/general").respond(200, json={"unexpected": True})
        router.get(ABUSE).respond(200, json={"data": []})
        router.get(URLSCAN).respond(200, json=payload("urlscan_search.json"))
        result = await call(registry, "lookup_ip", ip=IP)
    services = result.data["services"]
    assert services["virustotal"] == {
        "error": "virustotal returned a malformed response (not JSON)"
    }
    assert services["otx"] == {"error": "otx returned an unexpected response (no pulse_info)"}
    assert services["abuseipdb"]["error"].startswith("abuseipdb returned an unexpected response")
    assert services["urlscan"]["found"] is True
    assert result.ok and result.data["failed"] == ["otx", "virustotal", "abuseipdb"]


async def test_timeouts_and_server_errors(build: Any) -> None:
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/ip_addresses/{IP}").mock(side_effect=httpx.ReadTimeout("slow"))
        router.get(f"{OTX}/IPv4/{IP}/general").mock(side_effect=httpx.ConnectError("refused"))
        router.get(ABUSE).respond(503, text="Service Unavailable")
        router.get(URLSCAN).respond(401, json={"message": "API key invalid", "status": 401})
        result = await call(registry, "lookup_ip", ip=IP)
    assert result.data["services"] == {
        "otx": {"error": "otx is unreachable (ConnectError)"},
        "virustotal": {"error": "virustotal timed out after 2s"},
        "abuseipdb": {"error": "abuseipdb returned HTTP 503"},
        "urlscan": {"error": "urlscan rejected the request (HTTP 401: check the API key)"},
    }
    assert not result.ok and "every threat-intel service failed" in result.data["error"]


async def test_client_error_detail_is_passed_on(build: Any) -> None:
    registry = build(settings("abuseipdb"))
    with respx.mock() as router:
        router.get(ABUSE).respond(
            422,
            json={
                "errors": [{"detail": "The ip address must be a valid IP address.", "status": 422}]
            },
        )
        result = await call(registry, "lookup_ip", ip=IP)
    assert result.data["services"]["abuseipdb"] == {
        "error": "abuseipdb returned HTTP 422: The ip address must be a valid IP address."
    }


# --- cache --------------------------------------------------------------------------


async def test_second_lookup_is_served_from_the_cache(build: Any) -> None:
    registry = build(settings("virustotal", "abuseipdb"))
    with respx.mock() as router:
        vt = router.get(f"{VT}/ip_addresses/{IP}").respond(200, json=payload("virustotal_ip.json"))
        abuse = router.get(ABUSE).respond(200, json=payload("abuseipdb_check.json"))
        first = await call(registry, "lookup_ip", ip=IP)
        second = await call(registry, "lookup_ip", ip=IP)
    assert vt.call_count == 1 and abuse.call_count == 1
    assert "cached" not in first.data["services"]["virustotal"]
    assert second.data["services"]["virustotal"] == {
        **first.data["services"]["virustotal"],
        "cached": True,
    }
    assert second.data["flagged_by"] == first.data["flagged_by"]


async def test_errors_are_not_cached(build: Any) -> None:
    registry = build(settings("virustotal"))
    with respx.mock() as router:
        route = router.get(f"{VT}/ip_addresses/{IP}")
        route.side_effect = [
            httpx.Response(500),
            httpx.Response(200, json=payload("virustotal_ip.json")),
        ]
        failed = await call(registry, "lookup_ip", ip=IP)
        retried = await call(registry, "lookup_ip", ip=IP)
    assert not failed.ok and retried.ok and route.call_count == 2


async def test_cache_entries_expire(db: Database, http: httpx.AsyncClient) -> None:
    now = [datetime(2025, 11, 8, tzinfo=UTC)]
    cache = IntelCache(db, ttl_s=3600, clock=lambda: now[0])
    service = VirusTotal(http, SecretStr(KEYS["virustotal"]), HttpPolicy())
    deps = IntelDeps(services=[service], cache=cache, internal_suffixes=())
    target = validate_ip(IP)
    with respx.mock() as router:
        route = router.get(f"{VT}/ip_addresses/{IP}").respond(
            200, json=payload("virustotal_ip.json")
        )
        await lookup(deps, target)
        now[0] += timedelta(minutes=59)
        assert (await lookup(deps, target))["services"]["virustotal"]["cached"] is True
        now[0] += timedelta(minutes=2)
        fresh = await lookup(deps, target)
    assert route.call_count == 2 and "cached" not in fresh["services"]["virustotal"]


# --- refusals: nothing internal leaves the machine ----------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "reason"),
    [
        ("lookup_ip", {"ip": "10.0.0.5"}, "10.0.0.5 is a private address"),
        ("lookup_ip", {"ip": "192.168.0.1"}, "is a private address"),
        ("lookup_ip", {"ip": "127.0.0.1"}, "is a loopback address"),
        ("lookup_ip", {"ip": "169.254.169.254"}, "is a link-local address"),
        ("lookup_ip", {"ip": "100.64.1.1"}, "is a non-public address"),
        ("lookup_ip", {"ip": "fe80::1"}, "is a link-local address"),
        ("lookup_ip", {"ip": "fd00::1"}, "is a private address"),
        ("lookup_ip", {"ip": "::ffff:10.1.2.3"}, "10.1.2.3 is a private address"),
        ("lookup_ip", {"ip": "240.0.0.1"}, "is a reserved address"),
        ("lookup_ip", {"ip": "224.0.0.251"}, "is a multicast address"),
        ("lookup_ip", {"ip": "1.2.3"}, "unusual spelling of the address 1.2.0.3"),
        ("lookup_ip", {"ip": "evil.com"}, "is not an IPv4 or IPv6 address"),
        ("lookup_domain", {"domain": "fileserver"}, "single-label"),
        ("lookup_domain", {"domain": "db01.corp"}, "internal domain"),
        ("lookup_domain", {"domain": "metadata.google.internal"}, "internal domain"),
        ("lookup_domain", {"domain": "printer.local"}, "internal domain"),
        ("lookup_domain", {"domain": "wiki.acme-intra.net"}, "internal domain"),
        ("lookup_domain", {"domain": "localhost"}, "single-label"),
        ("lookup_domain", {"domain": "bad_name!.com"}, "not a valid domain name"),
        ("lookup_domain", {"domain": "8.8.8.8"}, "use the IP lookup"),
        ("lookup_domain", {"domain": "https://x.com/a"}, "use the URL lookup"),
        ("lookup_url", {"url": "http://10.0.0.8/admin"}, "private address"),
        ("lookup_url", {"url": "https://jenkins.corp/job/1"}, "internal domain"),
        ("lookup_url", {"url": "http://[2002:a80:14::1]/"}, "10.128.0.20, embedded as 6to4"),
        ("lookup_url", {"url": "https://10-128-0-20.nip.io/"}, "private address 10.128.0.20"),
        ("lookup_ip", {"ip": "2002:0a80:0014::1"}, "10.128.0.20, embedded as 6to4"),
        ("lookup_domain", {"domain": "10.128.0.20.nip.io"}, "private address 10.128.0.20"),
        ("lookup_url", {"url": "ftp://evil.com/x"}, "not an absolute http(s) URL"),
        ("lookup_url", {"url": "evil.com/x"}, "not an absolute http(s) URL"),
        ("lookup_url", {"url": "http://evil.com:99999/"}, "not a valid URL"),
        ("lookup_hash", {"hash": "xyz"}, "not an md5, sha1 or sha256"),
        ("lookup_hash", {"hash": "a" * 128}, "not an md5, sha1 or sha256"),
    ],
)
async def test_malformed_and_internal_indicators_are_refused_before_any_request(
    build: Any, tool: str, args: dict[str, str], reason: str
) -> None:
    cfg = settings(
        "otx",
        "virustotal",
        "abuseipdb",
        "urlscan",
        internal_domain_suffixes=[".corp", "acme-intra.net"],
    )
    registry = build(cfg)
    with respx.mock(assert_all_called=False) as router:
        router.route().respond(500)  # anything that did go out would be seen here
        result = await call(registry, tool, **args)
    assert not result.ok and reason in result.data["error"]
    assert router.calls.call_count == 0


HOSTILE_URLS = [
    "https://exfil-collector.net/c?h=db-prod-01.corp&ip=10.128.0.20",
    "https://exfil-collector.net/c?who=alice%40acme-intra.net",
    "https://exfil-collector.net/c/MTAuMTI4LjAuMjA=/p.gif",  # base64 of 10.128.0.20
    "https://svc:hunter2@exfil-collector.net/",
    "https://exfil-collector.net/c?via=[2002:a80:14::1]",
]
LEAKS = ("10.128", "db-prod", "alice", "acme-intra", "MTAuMTI4", "hunter2", "2002", "a80")


@pytest.mark.parametrize("url", HOSTILE_URLS)
async def test_a_url_carrying_internal_data_is_reduced_to_its_host_for_every_service(
    build: Any, url: str
) -> None:
    registry = build(settings("otx", "virustotal", "urlscan"))
    with respx.mock() as router:
        vt = router.get(f"{VT}/domains/exfil-collector.net").respond(
            200, json=payload("virustotal_domain.json")
        )
        otx = router.get(f"{OTX}/domain/exfil-collector.net/general").respond(
            200, json=payload("otx_domain_general_clean.json")
        )
        scan = router.get(URLSCAN).respond(200, json=payload("urlscan_search_empty.json"))
        result = await call(registry, "lookup_url", url=url)
    assert result.ok and result.data["indicator"] == "exfil-collector.net"
    assert "the URL was not sent" in result.data["withheld"]
    assert vt.call_count == otx.call_count == scan.call_count == 1
    assert scan.calls.last.request.url.params["q"] == 'domain:"exfil-collector.net"'
    for request, _ in router.calls:
        sent = str(request.url) + request.content.decode()
        assert not any(leak.lower() in sent.lower() for leak in LEAKS), sent


async def test_a_forged_target_never_reaches_a_service(
    http: httpx.AsyncClient, db: Database
) -> None:
    deps = IntelDeps(
        services=[VirusTotal(http, SecretStr("k"), HttpPolicy())],
        cache=IntelCache(db, 0),
        internal_suffixes=(".corp",),
    )
    with respx.mock(assert_all_called=False) as router:
        router.route().respond(200, json={})
        with pytest.raises(ToolError, match="private address"):
            await lookup(deps, Target(kind="ip", value="10.0.0.1", subtype="ipv4"))
    assert router.calls.call_count == 0


# --- secrets and helpers ------------------------------------------------------------


async def test_api_keys_never_logged(build: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    registry = build(settings("otx", "virustotal", "abuseipdb", "urlscan"))
    with respx.mock() as router:
        router.get(f"{VT}/ip_addresses/{IP}").respond(
            401, json={"error": {"code": "WrongCredentialsError", "message": "Wrong API key"}}
        )
        router.get(f"{OTX}/IPv4/{IP}/general").respond(200, json=payload("otx_ipv4_general.json"))
        router.get(ABUSE).respond(429, headers={"Retry-After": "0"})
        router.get(URLSCAN).respond(200, json=payload("urlscan_search.json"))
        result = await call(registry, "lookup_ip", ip=IP)
    assert caplog.records  # the calls are logged...
    for key in KEYS.values():  # ...without a key, in logs or results
        assert key not in caplog.text and key not in result.as_json()


def test_retry_after_header_forms() -> None:
    assert retry_after("7") == 7.0
    assert retry_after("-3") == 0.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    later = (datetime.now(UTC) + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    wait = retry_after(later)
    assert wait is not None and 25 <= wait <= 30


async def test_concurrent_writes_of_one_key_both_land(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Two steps looking up the same indicator at once: no failed write, no warning."""
    caplog.set_level(logging.WARNING, logger="tools.intel.cache")
    cache = IntelCache(db, ttl_s=3600)
    target = validate_ip(IP)
    for service in ("virustotal", "otx", "abuseipdb", "urlscan"):
        await asyncio.gather(*(cache.put(service, target, {"n": i}) for i in range(2)))
        assert (await cache.get(service, target)) in ({"n": 0}, {"n": 1})
    assert "intel cache write failed" not in caplog.text
