"""Generate socbot's bundled ATT&CK Enterprise catalogue from MITRE's STIX data.

    uv run python scripts/make_attack_catalogue.py SOURCE [SOURCE ...] \
        [--attack-version 18.1] [--origin TEXT] [--out alerts/mitre/enterprise-attack.json]

Each SOURCE is a STIX bundle (``enterprise-attack.json`` from github.com/mitre/cti or
github.com/mitre-attack/attack-stix-data) or a directory of bundles (``enterprise-attack/``
of a mitre/cti checkout: one bundle per object, ``attack-pattern/``, ``x-mitre-tactic/``,
``x-mitre-matrix/``, ``relationship/``). Only what socbot needs is kept: every technique and
sub-technique of the Enterprise domain with its ATT&CK id, name, tactics (kill-chain phase
short names), whether it is deprecated or revoked, and for a revoked one the id that
replaced it (following its ``revoked-by`` relationships to the end); the tactics in the
matrix's order with their ids and names; the ATT&CK version and the newest ``modified``
date. ``alerts.attack`` reads the result. MITRE's licence (``alerts/mitre/NOTICE``)
travels with it.

The release's version is read from the bundle's ``x-mitre-collection`` object; a
directory of per-object bundles has none, so give ``--attack-version`` for it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DOMAIN = "enterprise-attack"
OUT = Path(__file__).resolve().parents[1] / "alerts" / "mitre" / "enterprise-attack.json"
Obj = dict[str, Any]


def stix_objects(source: Path) -> Iterator[Obj]:
    """Every object of the bundle ``source`` or of every bundle under the directory."""
    files = sorted(source.rglob("*.json")) if source.is_dir() else [source]
    for path in files:
        bundle = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(bundle, dict) and bundle.get("type") == "bundle":
            yield from bundle.get("objects", [])


def attack_id(obj: Obj) -> str | None:
    """The ``mitre-attack`` external id of ``obj`` (``T1110.003``, ``TA0006``)."""
    for ref in obj.get("external_references", []):
        if ref.get("source_name") == "mitre-attack" and ref.get("external_id"):
            return str(ref["external_id"])
    return None


def build(objects: list[Obj], version: str | None, origin: str) -> Obj:
    """The catalogue as ``alerts.attack`` reads it."""
    by_stix = {o["id"]: o for o in objects if "id" in o}
    collections = [o for o in objects if o.get("type") == "x-mitre-collection"]
    version = version or (collections[0].get("x_mitre_version") if collections else None)
    if not version:
        raise SystemExit("no x-mitre-collection object: give --attack-version")
    matrices = [o for o in objects if o.get("type") == "x-mitre-matrix"]
    order = [r for m in matrices if attack_id(m) == DOMAIN for r in m.get("tactic_refs", [])]
    tactics = [
        [attack_id(by_stix[ref]), by_stix[ref]["x_mitre_shortname"], by_stix[ref]["name"]]
        for ref in order
        if ref in by_stix
    ]
    replaced = {
        o["source_ref"]: o["target_ref"]
        for o in objects
        if o.get("type") == "relationship" and o.get("relationship_type") == "revoked-by"
    }
    techniques: dict[str, Obj] = {}
    dates: list[str] = []
    for obj in objects:
        tid = attack_id(obj)
        if obj.get("type") != "attack-pattern" or not tid or not tid.startswith("T"):
            continue
        if DOMAIN not in obj.get("x_mitre_domains", [DOMAIN]):
            continue
        dates.append(str(obj.get("modified", "")))
        entry: Obj = {
            "name": obj["name"],
            "tactics": [
                p["phase_name"]
                for p in obj.get("kill_chain_phases", [])
                if p.get("kill_chain_name") == "mitre-attack"
            ],
        }
        if obj.get("x_mitre_deprecated"):
            entry["deprecated"] = True
        if obj.get("revoked"):
            entry["revoked"] = True
            target = _last_replacement(obj["id"], replaced, by_stix)
            if target is not None and attack_id(target):
                entry["replaced_by"] = attack_id(target)
        if tid in techniques and not _supersedes(entry, techniques[tid]):
            continue  # an id is kept by its live object when a revoked one shares it
        techniques[tid] = entry
    return {
        "attack_version": version,
        "domain": DOMAIN,
        "modified": max(dates)[:10] if dates else "",
        "origin": origin,
        "tactics": tactics,
        "techniques": dict(sorted(techniques.items())),
    }


def _last_replacement(
    stix_id: str, replaced: dict[str, str], by_stix: dict[str, Obj]
) -> Obj | None:
    """What replaced ``stix_id`` in the end: revocations chain (T1073 → T1574.002 → T1574.001)."""
    seen = {stix_id}
    while stix_id in replaced and replaced[stix_id] not in seen:
        stix_id = replaced[stix_id]
        seen.add(stix_id)
    return by_stix.get(stix_id) if len(seen) > 1 else None


def _supersedes(new: Obj, old: Obj) -> bool:
    def live(e: Obj) -> bool:
        return not e.get("revoked") and not e.get("deprecated")

    return live(new) and not live(old)


def dump(catalogue: Obj) -> str:
    """JSON with one technique per line, so a new release reads as a small diff."""
    head = {k: v for k, v in catalogue.items() if k not in ("tactics", "techniques")}
    lines = ["{"]
    lines += [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append('  "tactics": [')
    tactics = [f"    {json.dumps(t, ensure_ascii=False)}" for t in catalogue["tactics"]]
    lines += [",\n".join(tactics), "  ],", '  "techniques": {']
    items = [
        f"    {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in catalogue["techniques"].items()
    ]
    lines += [",\n".join(items), "  }", "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--attack-version", default=None)
    parser.add_argument("--origin", default="MITRE ATT&CK STIX data")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    # A mitre/cti checkout has each object twice: in its own bundle and in the big one.
    unique = {
        o.get("id", n): o for n, o in enumerate(o for s in args.sources for o in stix_objects(s))
    }
    objects = list(unique.values())
    catalogue = build(objects, args.attack_version, args.origin)
    args.out.write_text(dump(catalogue), encoding="utf-8")
    live = sum(
        not e.get("revoked") and not e.get("deprecated") for e in catalogue["techniques"].values()
    )
    print(
        f"ATT&CK {catalogue['attack_version']}: {len(catalogue['techniques'])} techniques "
        f"({live} current), {len(catalogue['tactics'])} tactics → {args.out}"
    )


if __name__ == "__main__":
    main()
