"""The self-contained HTML report: one file, inline SVG charts, no external asset.

Everything shown comes from the report object (``evals.report``) and is escaped by
jinja2's autoescape; scenario text is data, never markup. Charts: verdict accuracy
and pass rate by category (bars), latency and cost per attempt (histograms).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

TEMPLATES = Path(__file__).resolve().parent / "templates"
WIDTH = 560
BAR_HEIGHT = 22


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
    )


def category_bars(per_category: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per category: the bar widths (pixels) of accuracy and pass rate."""
    rows = []
    for i, (name, figures) in enumerate(per_category.items()):
        accuracy = figures.get("verdict_accuracy") or 0.0
        passed = figures.get("pass_rate") or 0.0
        rows.append(
            {
                "name": name,
                "y": i * (2 * BAR_HEIGHT + 10),
                "accuracy": accuracy,
                "passed": passed,
                "accuracy_w": round(accuracy * (WIDTH - 160), 1),
                "passed_w": round(passed * (WIDTH - 160), 1),
            }
        )
    return rows


def histogram(values: Sequence[float], bins: int = 10) -> list[dict[str, Any]]:
    """Equal-width bins over ``values``: lower edge, count and bar height (pixels)."""
    if not values:
        return []
    low, high = min(values), max(values)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / width), bins - 1)] += 1
    top = max(counts)
    step = WIDTH / bins
    return [
        {
            "x": round(i * step, 1),
            "w": round(step - 2, 1),
            "h": round(100 * c / top, 1),
            "count": c,
            "edge": low + i * width,
        }
        for i, c in enumerate(counts)
    ]


def render_html(report: dict[str, Any]) -> str:
    results = report["results"]
    template = _environment().get_template("report.html.j2")
    return template.render(
        run=report.get("run") or {},
        summary=report["summary"],
        results=results,
        bars=category_bars(report["summary"]["per_category"]),
        latency=histogram([r["latency_s"] for r in results]),
        cost=histogram([r["cost_usd"] for r in results]),
        width=WIDTH,
        bar_height=BAR_HEIGHT,
    )


def write_html(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report), "utf-8")
