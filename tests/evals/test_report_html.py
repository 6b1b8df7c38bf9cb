"""The HTML report is one self-contained file and shows hostile text as text."""

from __future__ import annotations

import re
from pathlib import Path

from evals.report import report
from evals.report_html import render_html
from evals.results import Attempt
from evals.scenario import Scenario
from evals.truth import Limits, Truth

HOSTILE = "<script>alert(1)</script><img src=x onerror=\"fetch('https://evil.example')\">"


def test_hostile_values_are_escaped_and_nothing_is_fetched(tmp_path: Path) -> None:
    (tmp_path / "alert.json").write_text('{"title": "x"}')
    scenario = Scenario(
        id="s1",
        title=HOSTILE,
        category="cloud",
        provenance={"origin": "test (invented)", "licence": "-"},
        genuine=False,
        gates=Limits(),
        folder=tmp_path,
        truth=Truth(
            verdicts=["true_positive"],
            severity=("high", "critical"),
            must_establish=[HOSTILE],
            forbidden=[],
        ),
    )
    attempt = Attempt(
        scenario="s1",
        status="failed",
        error=HOSTILE,
        investigation_id=HOSTILE,
        conclusion={"verdict": HOSTILE, "severity": "high", "summary": HOSTILE},
        latency_s=1.5,
        cost_usd=0.002,
    )
    html = render_html(report([scenario], [attempt], {"pack": HOSTILE, "model": HOSTILE}))

    assert "<script" not in html and "<img" not in html and 'onerror="' not in html
    assert "&lt;script&gt;" in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    tags = re.findall(r"<[^>]*>", html)
    assert not [t for t in tags if re.search(r"\b(src|href)=|url\(|<link", t)]
    assert html.count("<svg") == 3  # by category, latency, cost
