"""The invented organisation: people, accounts, hosts and addresses (seeded)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

START = datetime(2026, 3, 2)  # a Monday; the window is two weeks (naive UTC)
DAYS = 14
END = START + timedelta(days=DAYS)
MAIL = "kestrelfreight.com"
AD = "KESTREL"
SEED = 31

FIRST = (
    "anna ben carla david elena felix greta hugo ines jonas karla lars mia nils olga paul "
    "rosa sami tara ugo vera wim xenia yusuf zoe adam bianca cem dora emil fatima gustav "
    "hanna ivan julia kofi lena marek nadia oskar petra quinn rafael sofia tomas ulla "
    "viktor wanda yara zeno"
).split()
LAST = (
    "keller novak berg costa diaz ek fischer gallo haas ito jensen kowalski lind moreau "
    "nilsson ortiz petrov quist rossi schmid tanaka ueda varga weber young zeller "
    "abbas brandt claes dvorak engel faure grieg holm ivanova jovic kahn lorenz maier "
    "nagy olsen pires reyes sato teller vidal wolff"
).split()
DEPTS = {  # code: (name, people, subnet)
    "FIN": ("Finance", 34, 11),
    "SAL": ("Sales", 52, 12),
    "ENG": ("Engineering", 70, 13),
    "OPS": ("Operations", 44, 14),
    "LOG": ("Logistics", 40, 15),
    "HR": ("People", 16, 16),
    "LEG": ("Legal", 12, 17),
    "IT": ("IT", 18, 18),
}
OFFICES = {
    "DE": ("Germany", "Hamburg"),
    "GB": ("United Kingdom", "London"),
    "NL": ("Netherlands", "Rotterdam"),
}


@dataclass
class Person:
    login: str  # first.last
    name: str
    dept: str
    title: str
    office: str  # country code
    host: str
    ip: str
    home_ip: str
    manager: str = ""
    admin: bool = False
    traveller: bool = False
    device: str = ""

    @property
    def upn(self) -> str:
        return f"{self.login}@{MAIL}"


@dataclass
class Host:
    name: str
    ip: str
    os: str
    owner: str
    dept: str
    role: str
    criticality: str = "medium"
    notes: str = ""


@dataclass
class Org:
    people: list[Person]
    hosts: list[Host]
    servers: dict[str, Host]
    egress: dict[str, str]  # office -> public NAT address
    service: dict[str, str] = field(default_factory=dict)  # service account -> purpose
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))

    def person(self, login: str) -> Person:
        return next(p for p in self.people if p.login == login)

    def in_dept(self, dept: str) -> list[Person]:
        return [p for p in self.people if p.dept == dept]


def public_ip(rng: random.Random) -> str:
    """A public-looking IPv4 address (never private, documentation or multicast)."""
    while True:
        a = rng.choice(
            [
                5,
                31,
                37,
                46,
                62,
                77,
                78,
                80,
                81,
                82,
                84,
                85,
                87,
                88,
                89,
                91,
                93,
                94,
                95,
                109,
                176,
                178,
                185,
                188,
                194,
                212,
                213,
                217,
            ]
        )
        ip = f"{a}.{rng.randint(1, 254)}.{rng.randint(0, 254)}.{rng.randint(2, 253)}"
        return ip


SERVERS = [  # name, ip, role, os, criticality, notes
    ("DC-01", "10.1.0.10", "domain controller", "Windows Server 2022", "critical", ""),
    ("DC-02", "10.1.0.11", "domain controller", "Windows Server 2022", "critical", ""),
    ("FS-01", "10.1.0.20", "file server", "Windows Server 2019", "high", ""),
    ("SQL-01", "10.1.0.30", "finance database", "Windows Server 2019", "critical", ""),
    (
        "SCCM-01",
        "10.1.0.40",
        "configuration manager",
        "Windows Server 2022",
        "high",
        "pushes software and scripts to all workstations",
    ),
    (
        "BACKUP-01",
        "10.1.0.50",
        "backup server",
        "Windows Server 2022",
        "high",
        "nightly backups 01:00-04:00 UTC to offsite object storage",
    ),
    (
        "SCAN-01",
        "10.1.5.20",
        "vulnerability scanner",
        "Ubuntu 22.04",
        "medium",
        "authenticated network scan every Tuesday 01:00-05:00 UTC (change CHG-1000)",
    ),
    ("JUMP-01", "10.1.0.60", "admin jump host", "Windows Server 2022", "high", "IT admins only"),
    (
        "CI-01",
        "10.1.7.11",
        "CI runner",
        "Ubuntu 22.04",
        "high",
        "runs terraform-ci deploys on weekdays",
    ),
    (
        "CI-02",
        "10.1.7.12",
        "CI runner",
        "Ubuntu 22.04",
        "high",
        "runs terraform-ci deploys on weekdays",
    ),
    ("WEB-01", "172.20.1.11", "public web server", "Ubuntu 22.04", "high", "DMZ"),
    ("WEB-02", "172.20.1.12", "public web server", "Ubuntu 22.04", "high", "DMZ"),
    (
        "PRINT-01",
        "10.1.0.70",
        "print and scan server",
        "Windows Server 2019",
        "low",
        "multifunction printers relay scan-to-mail",
    ),
    (
        "MON-01",
        "10.1.0.80",
        "monitoring",
        "Ubuntu 22.04",
        "medium",
        "pings and polls every host every 5 minutes",
    ),
    ("APP-01", "10.1.3.21", "freight booking app", "Windows Server 2022", "high", ""),
    ("APP-02", "10.1.3.22", "freight booking app", "Windows Server 2022", "high", ""),
]
TITLES = {
    "FIN": ["Accountant", "Controller", "Payroll Specialist"],
    "SAL": ["Account Executive", "Sales Manager"],
    "ENG": ["Software Engineer", "SRE", "Data Engineer"],
    "OPS": ["Operations Analyst", "Dispatcher"],
    "LOG": ["Logistics Planner", "Warehouse Lead"],
    "HR": ["HR Partner", "Recruiter"],
    "LEG": ["Counsel", "Paralegal"],
    "IT": ["IT Administrator", "Service Desk Analyst", "Security Engineer"],
}


def build_org(seed: int = SEED) -> Org:
    rng = random.Random(seed)
    names = [(f, s) for f in FIRST for s in LAST]
    rng.shuffle(names)
    people: list[Person] = []
    hosts: list[Host] = []
    taken: set[str] = set()
    for dept, (_, count, subnet) in DEPTS.items():
        for n in range(count):
            first, last = names.pop()
            login = f"{first}.{last}"
            if login in taken:
                continue
            taken.add(login)
            office = rng.choices(list(OFFICES), weights=[6, 3, 2])[0]
            host = f"WS-{dept}-{n + 1:03d}"
            ip = f"10.{subnet}.{n // 200}.{20 + n % 200}"
            p = Person(
                login=login,
                name=f"{first.title()} {last.title()}",
                dept=dept,
                title=rng.choice(TITLES[dept]),
                office=office,
                host=host,
                ip=ip,
                home_ip=public_ip(rng),
                admin=(dept == "IT" and n < 8),
                traveller=(dept in ("SAL", "LOG", "LEG") and rng.random() < 0.35),
                device=f"{rng.getrandbits(64):016x}",
            )
            people.append(p)
            hosts.append(
                Host(host, ip, "Windows 11 Enterprise", p.login, dept, "workstation", "medium")
            )
    for dept in DEPTS:
        staff = [p for p in people if p.dept == dept]
        for p in staff[1:]:
            p.manager = staff[0].login
    servers = {
        name: Host(name, ip, os_, "it-infra", "IT", role, crit, notes)
        for name, ip, role, os_, crit, notes in SERVERS
    }
    hosts += list(servers.values())
    egress = {o: public_ip(rng) for o in OFFICES}
    service = {
        "svc-backup": "backup agent on BACKUP-01",
        "svc-sccm": "configuration manager push account",
        "svc-scan": "vulnerability scanner credential",
        "svc-sql": "finance database service",
        "svc-mfp": "multifunction printer scan-to-mail (legacy SMTP/IMAP)",
        "svc-monitor": "monitoring agent",
    }
    return Org(people, hosts, servers, egress, service, rng)


def ts(when: datetime) -> str:
    """A naive-UTC timestamp as the Parquet writer reads it."""
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when.isoformat(sep=" ")
