"""Build the bundled eval pack: ``python -m scripts.eval_pack.make --otrf DIR [--out DIR]``.

``--otrf``: the OTRF Security-Datasets zip files unpacked, one folder per zip (named
as the zip without ``.zip``). Writes every scenario folder and the pack's NOTICE.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scripts.eval_pack.cloud_identity import cloud, identity
from scripts.eval_pack.common import Case, write_case
from scripts.eval_pack.endpoint_network import endpoint, network
from scripts.eval_pack.genuine import genuine_cases

OTRF_LICENCE = """MIT License

Copyright (c) 2021 Open Threat Research Forge

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""

PACK = Path(__file__).resolve().parents[2] / "evals" / "packs" / "core"


def notice(cases: list[Case]) -> str:
    lines = [
        "socbot eval pack 'core': origin and licence of each scenario.",
        "",
        "Scenarios marked SYNTHETIC were written for socbot: invented people, hosts and events;",
        "Apache-2.0, as this repository. Their public IP addresses and domains only make the",
        "data look real, and their recorded threat-intel answers are INVENTED: they describe",
        "no real address, domain or organisation.",
        "Scenarios over genuine telemetry keep the rows of OTRF Security-Datasets",
        "(https://github.com/OTRF/Security-Datasets, MIT License, Copyright (c) 2021 Open",
        "Threat Research Forge), cut to the columns listed in scripts/eval_pack/genuine.py;",
        "their alerts were written for the pack. OTRF Security-Datasets' licence:",
        "",
        *("  " + line if line else "" for line in OTRF_LICENCE.splitlines()),
        "",
    ]
    for case in sorted(cases, key=lambda c: c.id):
        mark = "SYNTHETIC" if case.synthetic else "genuine logs"
        lines += [f"{case.id} [{mark}]", f"  origin: {case.origin}", f"  licence: {case.licence}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--otrf", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=PACK)
    args = parser.parse_args()
    cases = [*genuine_cases(args.otrf), *cloud(), *identity(), *endpoint(), *network()]
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "scenario ids repeat"
    args.out.mkdir(parents=True, exist_ok=True)
    for case in cases:
        write_case(args.out, case)
    (args.out / "NOTICE").write_text(notice(cases), "utf-8")
    print(f"{len(cases)} scenarios in {args.out}")


if __name__ == "__main__":
    main()
