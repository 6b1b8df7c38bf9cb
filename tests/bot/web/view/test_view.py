"""What the investigation page makes of a record: ATT&CK technique labels and links."""

from __future__ import annotations

from bot.web.view.investigation import techniques


def test_technique_links_only_for_well_formed_ids() -> None:
    found = techniques(
        {
            "techniques": [
                {"id": "T1110.003", "name": "Password Spraying", "tactic": "Credential Access"},
                {"id": "javascript:alert(1)", "name": "x"},
                "not a technique",
            ]
        }
    )
    assert found == [
        (
            "T1110.003 Password Spraying (Credential Access)",
            "https://attack.mitre.org/techniques/T1110/003/",
        ),
        ("javascript:alert(1) x", None),
    ]
