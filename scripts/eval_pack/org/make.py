"""Build the ``org`` eval pack: ``python -m scripts.eval_pack.org.make --otrf DIR [--out DIR]``.

``--otrf``: OTRF Security-Datasets zips unpacked, one folder per zip named as the zip
(``datasets/atomic/windows/*/host/*.zip``). Writes pack.toml, data/ (the shared
background), scenarios/ and NOTICE; the same seed gives the same content.
"""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import argparse
import random
import shutil
import zlib
from pathlib import Path

from scripts.eval_pack.make import OTRF_LICENCE
from scripts.eval_pack.org import (
    endpoint_bg,
    identity_bg,
    network_bg,
    reference,
    synth_cloud,
    synth_identity,
    synth_network,
    synth_saas,
)
from scripts.eval_pack.org.genuine_cases import genuine
from scripts.eval_pack.org.people import SEED, build_org
from scripts.eval_pack.org.synth_base import Ctx
from scripts.eval_pack.org.write import Scenario, pack_toml, write_background, write_scenario

PACK = Path(__file__).resolve().parents[3] / "evals" / "packs" / "org"
TEMPLATES = [
    *synth_identity.TEMPLATES,
    *synth_cloud.TEMPLATES,
    *synth_network.TEMPLATES,
    *synth_saas.TEMPLATES,
]
INSTANCES = 2
DESCRIPTION = (
    "One organisation (about 290 people, 300 hosts) over two weeks; alerts in pairs with opposite "
    "verdicts decided by the logs; a third of the scenarios on genuine recordings."
)


def background(seed: int) -> tuple[object, dict[str, list[dict[str, object]]]]:
    org = build_org(seed)
    trip_list = reference.trips(org)
    trips: dict[str, list[reference.Trip]] = {}
    for t in trip_list:
        trips.setdefault(t.login, []).append(t)
    entra, okta = identity_bg.signins(org, trips)
    sysmon, security = endpoint_bg.endpoint(org)
    flows, dns, proxy = network_bg.network(org)
    return org, {
        "sysmon": sysmon,
        "windows_security": security,
        "entra_signin": entra + identity_bg.mfp_noise(org),
        "okta_system_log": okta,
        "firewall": flows,
        "dns": dns,
        "proxy": proxy,
        "cloudtrail": identity_bg.cloudtrail(org),
        "saas_audit": identity_bg.saas(org, trips),
        "assets": reference.assets(org),
        "directory": reference.directory(org),
        "change_tickets": reference.change_tickets(org),
        "travel": reference.travel(trip_list),
    }


def scenarios(org: object, otrf: Path) -> list[Scenario]:
    out = genuine(org, otrf)  # type: ignore[arg-type]
    for template in TEMPLATES:
        for k in range(INSTANCES):
            rng = random.Random(zlib.crc32(f"{template.__name__}:{k}".encode()))
            out += template(Ctx(org, k, rng))  # type: ignore[arg-type]
    ids = [s.id for s in out]
    assert len(ids) == len(set(ids)), "scenario ids repeat"
    return out


def notice(cases: list[Scenario]) -> str:
    lines = [
        "socbot eval pack 'org': origin and licence of its data.",
        "",
        "The organisation (Kestrel Freight, kestrelfreight.com, KESTREL, kestrel.internal), its people,",
        "hosts, addresses, tickets, bookings and every background row under data/ are INVENTED by the",
        "seeded generator scripts/eval_pack/org (Apache-2.0, as this repository). Public IP addresses and",
        "domains in them only make the data look real; they describe no real party.",
        "Scenarios marked INVENTED inject rows written by that generator. Scenarios marked GENUINE inject",
        "the Sysmon and Security rows of one OTRF Security-Datasets recording",
        "(https://github.com/OTRF/Security-Datasets, commit d9d40ef1, MIT License, Copyright (c) 2021 Open",
        "Threat Research Forge), with lab host names, accounts, domains and private addresses replaced by",
        "the organisation's, times shifted into the pack's window, test-framework names replaced, and the",
        "'audit log cleared' and Sysmon configuration rows dropped (scripts/eval_pack/org/otrf_map.py).",
        "Every alert was written for the pack. OTRF Security-Datasets' licence:",
        "",
        *("  " + line if line else "" for line in OTRF_LICENCE.splitlines()),
        "",
    ]
    for s in sorted(cases, key=lambda c: c.id):
        lines += [
            f"{s.id} [{'GENUINE' if s.genuine else 'INVENTED'}]",
            f"  origin: {s.origin}",
            f"  licence: {s.licence}",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--otrf", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=PACK)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    org, tables = background(args.seed)
    cases = scenarios(org, args.otrf)
    args.out.mkdir(parents=True, exist_ok=True)
    counts = write_background(args.out, tables)
    (args.out / "pack.toml").write_text(pack_toml("org", DESCRIPTION), "utf-8")
    shutil.rmtree(args.out / "scenarios", ignore_errors=True)
    for case in cases:
        write_scenario(args.out, case)
    (args.out / "NOTICE").write_text(notice(cases), "utf-8")
    attacks = sum(c.attack for c in cases)
    print(
        f"{len(cases)} scenarios ({attacks} attacks, {len(cases) - attacks} not, "
        f"{sum(c.genuine for c in cases)} genuine) in {args.out}; background rows: {counts}"
    )


if __name__ == "__main__":
    main()
