"""What the investigation page makes of a record: ATT&CK technique labels and links;
whole tables only for the calls a finding cites."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.web.view.investigation import investigation_view, techniques
from tests.bot.web.view.test_results import RESULT


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


def called(seq: int, ref: str) -> dict[str, Any]:
    payload = {"step_id": "", "ref": ref, "tool": "query_logs", "args": {}, "ok": True}
    payload |= {"result_chars": len(RESULT), "result_preview": RESULT}
    return {
        "seq": seq,
        "type": "tool_called",
        "at": "2025-11-03T22:06:13+00:00",
        "payload": payload,
    }


def test_only_a_cited_call_is_read_as_a_table_with_the_page() -> None:
    finding = {"finding": "SUCCESS for user33@example.com", "evidence_refs": ["s1#1"]}
    row = {
        "id": "r1",
        "status": "concluded",
        "created_at": datetime(2025, 11, 3, 22, 6, tzinfo=UTC),
        "record": {"conclusion": {"summary": "x", "key_findings": [finding]}},
    }
    view = investigation_view(row, [called(1, "s1#1"), called(2, "s2#1")], [], [])
    cited, other = view["direct_calls"]
    assert cited.table is not None and not cited.lazy
    assert len(cited.table.raw) == cited.table.total == 40 and 33 in cited.table.cited
    assert other.table is None and other.lazy  # drawn when opened ("Show")
    assert view["findings"][0]["refs"] == [("s1#1", "call-s1-1-r33")]
