"""ATT&CK techniques in the verdict posted to Slack: their section, and the review's notes
on the ids the code check dropped (which quote model text, so they are defanged too)."""

from __future__ import annotations

import json

from agent.concluder import Technique
from agent.review.critic import Review
from bot.blocks.investigation import conclusion_messages
from tests.bot.blocks.test_slack_render import (
    INDICATORS,
    STATS,
    assert_golden,
    assert_slack_safe,
    conclusion,
    review,
)

TECHNIQUES = [
    Technique(id="T1105", name="Ingress Tool Transfer", tactic="Command and Control"),
    Technique(id="T1090.003", name="Multi-hop Proxy", tactic="Command and Control"),
]
NOTES = [
    "ATT&CK: T1086 (PowerShell) is revoked in ATT&CK Enterprise v18.1; use T1059.001; dropped",
    "ATT&CK: 'update-check.lol <!here>' is not an ATT&CK technique id; dropped",
]


def test_techniques_and_dropped_ids_golden() -> None:
    verdict = conclusion().model_copy(update={"techniques": TECHNIQUES})
    checked = review().model_copy(update={"technique_notes": NOTES})
    messages = conclusion_messages(
        verdict,
        investigation_id="inv-7f3a",
        limits_hit=[],
        indicators=INDICATORS,
        review=checked,
        stats=STATS,
    )
    assert_slack_safe(messages)  # the hostile note is escaped and defanged
    assert_golden("conclusion_attack", messages)
    [message] = messages
    texts = [json.dumps(b, ensure_ascii=False) for b in message["blocks"]]
    [section] = [t for t in texts if "ATT&amp;CK*" in t]
    assert "• *T1105* Ingress Tool Transfer · _Command and Control_" in section
    assert "• *T1090.003* Multi-hop Proxy · _Command and Control_" in section
    # It comes right after the summary, before the key findings.
    assert texts.index(section) < next(n for n, t in enumerate(texts) if "Key findings" in t)
    [notes] = [t for t in texts if "is revoked" in t]
    assert "update-check[.]lol &lt;!here&gt;" in notes


def test_dropped_ids_are_shown_even_without_key_findings() -> None:
    bare = conclusion().model_copy(update={"key_findings": [], "techniques": []})
    checked = Review(status="passed", technique_notes=NOTES[:1])
    [message] = conclusion_messages(bare, investigation_id="inv-1", limits_hit=[], review=checked)
    text = json.dumps(message["blocks"], ensure_ascii=False)
    assert "T1086 (PowerShell) is revoked" in text and "ATT&amp;CK*" not in text
    [plain] = conclusion_messages(bare, investigation_id="inv-1", limits_hit=[])
    assert "ATT&amp;CK" not in json.dumps(plain["blocks"], ensure_ascii=False)
