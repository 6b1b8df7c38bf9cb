"""Background firewall sessions, DNS queries and web proxy requests, with the scanner's
weekly sweep, nightly offsite backups, monitoring polls and internet noise at the DMZ."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from scripts.eval_pack.org.people import MAIL, Org, public_ip, ts
from scripts.eval_pack.org.rhythm import active, days, work_time

SITES = [  # host, ip, category
    ("outlook.office365.com", "52.97.146.2", "Business"),
    ("teams.microsoft.com", "52.113.194.132", "Business"),
    ("www.google.com", "142.250.74.110", "Search"),
    ("kestrelfreight.my.salesforce.com", "13.110.14.2", "Business"),
    ("github.com", "140.82.121.4", "Software"),
    ("slack.com", "34.237.73.95", "Business"),
    ("www.linkedin.com", "13.107.42.14", "Social"),
    ("news.bbc.co.uk", "151.101.0.81", "News"),
    ("update.googleapis.com", "142.250.185.67", "Software Updates"),
    ("www.dhl.com", "23.55.235.93", "Business"),
    ("maps.googleapis.com", "142.250.186.42", "Business"),
    ("cdn.jsdelivr.net", "151.101.1.229", "CDN"),
]
RESOLVERS = ("10.1.0.10", "10.1.0.11")
SCAN_PORTS = (22, 80, 135, 139, 443, 445, 3389, 5985)


def fw(
    when: datetime,
    src: str,
    dst: str,
    port: int,
    rng: random.Random,
    *,
    out: int = 900,
    inn: int = 6000,
    dur: float = 2.0,
    app: str = "ssl",
    action: str = "allow",
    rule: str = "office-to-internet",
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "src_ip": src,
        "src_port": rng.randint(49152, 65535),
        "dst_ip": dst,
        "dst_port": port,
        "proto": "tcp",
        "action": action,
        "bytes_out": out,
        "bytes_in": inn,
        "duration_s": round(dur, 2),
        "app": app,
        "rule": rule,
    }


def network(org: Org) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(43)
    flows: list[dict[str, Any]] = []
    dns: list[dict[str, Any]] = []
    proxy: list[dict[str, Any]] = []
    hosts = [h for h in org.hosts if h.role != "public web server"]
    for day in days():
        for p in org.people:
            if not active(rng, day):
                continue
            for _ in range(rng.randint(3, 9)):
                host, ip, cat = rng.choice(SITES)
                when = work_time(rng, day)
                size = int(rng.lognormvariate(9, 1.3))
                dns.append(
                    {
                        "event_time": ts(when),
                        "client_ip": p.ip,
                        "query": host,
                        "qtype": "A",
                        "answer": ip,
                        "rcode": "NOERROR",
                    }
                )
                flows.append(
                    fw(
                        when,
                        p.ip,
                        ip,
                        443,
                        rng,
                        out=int(size * 0.1) + 400,
                        inn=size,
                        dur=rng.uniform(0.2, 30),
                    )
                )
                proxy.append(
                    {
                        "event_time": ts(when),
                        "user": f"{p.login}@{MAIL}",
                        "src_ip": p.ip,
                        "method": "GET",
                        "host": host,
                        "path": "/",
                        "status": 200,
                        "bytes_out": int(size * 0.1) + 400,
                        "bytes_in": size,
                        "category": cat,
                        "user_agent": "Chrome/122.0",
                        "action": "allowed",
                    }
                )
            if rng.random() < 0.05:
                when = work_time(rng, day)
                dns.append(
                    {
                        "event_time": ts(when),
                        "client_ip": p.ip,
                        "query": f"wpad.{rng.choice(['lan', 'home'])}",
                        "qtype": "A",
                        "answer": None,
                        "rcode": "NXDOMAIN",
                    }
                )
        if day.weekday() == 1:  # the scanner's weekly sweep, Tuesday 01:00-05:00
            for n, h in enumerate(hosts):
                for port in SCAN_PORTS:
                    when = day + timedelta(hours=1, seconds=n * 40 + port % 37)
                    flows.append(
                        fw(
                            when,
                            "10.1.5.20",
                            h.ip,
                            port,
                            rng,
                            out=60,
                            inn=rng.choice([0, 60, 300]),
                            dur=0.01,
                            app="incomplete",
                            rule="scanner-to-internal",
                        )
                    )
        for h in range(1, 4):  # nightly offsite backup
            flows.append(
                fw(
                    day + timedelta(hours=h, minutes=5),
                    "10.1.0.50",
                    "52.219.170.25",
                    443,
                    rng,
                    out=rng.randint(8, 14) * 10**9,
                    inn=2 * 10**7,
                    dur=3300,
                    app="ssl",
                    rule="backup-offsite",
                )
            )
        for k in range(0, 1440, 5):  # monitoring polls (sampled: one host per poll)
            h = hosts[(k // 5) % len(hosts)]
            flows.append(
                fw(
                    day + timedelta(minutes=k),
                    "10.1.0.80",
                    h.ip,
                    5985 if "Windows" in h.os else 22,
                    rng,
                    out=300,
                    inn=1200,
                    dur=0.05,
                    app="monitoring",
                    rule="monitoring",
                )
            )
        for _ in range(rng.randint(250, 400)):  # internet noise at the DMZ, denied
            flows.append(
                fw(
                    day + timedelta(seconds=rng.randint(0, 86399)),
                    public_ip(rng),
                    rng.choice(["172.20.1.11", "172.20.1.12"]),
                    rng.choice([22, 23, 3389, 8080, 5900, 445]),
                    rng,
                    out=60,
                    inn=0,
                    dur=0,
                    app="incomplete",
                    action="deny",
                    rule="internet-to-dmz",
                )
            )
        for _ in range(rng.randint(600, 900)):  # public web traffic, allowed
            flows.append(
                fw(
                    day + timedelta(seconds=rng.randint(0, 86399)),
                    public_ip(rng),
                    rng.choice(["172.20.1.11", "172.20.1.12"]),
                    443,
                    rng,
                    out=rng.randint(500, 3000),
                    inn=rng.randint(2000, 90000),
                    dur=rng.uniform(0.1, 5),
                    rule="internet-to-dmz",
                )
            )
    return flows, dns, proxy
