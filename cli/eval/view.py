"""What ``socbot eval`` prints in a terminal: the pack, a run's summary, a comparison."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from evals.scenario import Scenario


def pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f} %"


def pack_table(scenarios: Sequence[Scenario]) -> Table:
    table = Table(title=f"{len(scenarios)} scenarios")
    for column in ("id", "category", "accepted", "origin"):
        table.add_column(column, overflow="fold")
    for s in scenarios:
        origin = "synthetic" if s.synthetic else s.origin.split(" (", 1)[0]
        accepted = " | ".join(s.truth.verdicts)
        table.add_row(*(Text(c) for c in (s.id, s.category, accepted, origin)))
    return table


def pack_rows(scenarios: Sequence[Scenario]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "title": s.title,
            "category": s.category,
            "expected_verdict": s.truth.verdict,
            "accepted_verdicts": list(s.truth.verdicts),
            "rationale": s.truth.rationale,
            "severity": list(s.truth.severity),
            "genuine": s.genuine,
            "synthetic": s.synthetic,
            "pair": s.pair,
            "origin": s.origin,
            "licence": s.licence,
        }
        for s in scenarios
    ]


def print_summary(console: Console, report: dict[str, Any]) -> None:
    """The headline figures, the per-category table and the failed scenarios."""
    s = report["summary"]
    head = Table(title="socbot eval", show_header=False)
    head.add_column("figure")
    head.add_column("value", justify="right")
    rows = [
        ("scenarios (attempts)", f"{s['scenarios']} ({s['attempts']})"),
        ("verdict accuracy", pct(s["verdict_accuracy"]) + _interval(s, "verdict_accuracy")),
        ("true-positive recall", pct(s["tp_recall"])),
        ("false-positive rejection", pct(s["fp_rejection"])),
        ("pass rate (every gate)", pct(s["pass_rate"]) + _interval(s, "pass_rate")),
        ("severity in band", pct(s.get("severity_accuracy"))),
    ]
    for key, label in (("alert_only", "alert only (no tools)"), ("guessability", "keyword guess")):
        if s.get(key):
            rows.append((f"{label}: accuracy · pass", baseline_line(s[key])))
    if "pass_hat_k" in s:
        rows.append((f"pass^{s['repeats']}", pct(s["pass_hat_k"])))
    if s.get("judge_score") is not None:
        rows.append(("judge score (beside the gates)", f"{s['judge_score']:.2f}"))
    rows += [
        ("cost", _cost(s)),
        ("latency p50 / p95", f"{s['latency_p50_s']} s / {s['latency_p95_s']} s"),
        ("model calls · tokens", f"{s['model_calls']} · {s['tokens']}"),
    ]
    for name, value in rows:
        head.add_row(name, value)
    console.print(head)
    cats = Table(title="per category")
    for column in ("category", "scenarios", "accuracy", "TP recall", "FP rejection", "pass"):
        cats.add_column(column, justify="right" if column != "category" else "left")
    for name, c in s["per_category"].items():
        cats.add_row(
            name,
            str(c["scenarios"]),
            pct(c["verdict_accuracy"]),
            pct(c["tp_recall"]),
            pct(c["fp_rejection"]),
            pct(c["pass_rate"]),
        )
    console.print(cats)
    failed = [r for r in report["results"] if not r["passed"]]
    if failed:
        table = Table(title=f"{len(failed)} attempts failed a gate")
        for column in ("scenario", "expected", "given", "failed gates", "investigation"):
            table.add_column(column, overflow="fold")
        for r in failed:
            gates = ", ".join(g for g, ok in r["gates"].items() if ok is False)
            cells = (
                f"{r['id']}#{r['repeat']}",
                r["expected_verdict"],
                str(r["given_verdict"]),
                gates,
                str(r["investigation_id"]),
            )
            table.add_row(*(Text(c) for c in cells))
        console.print(table)


def _interval(summary: dict[str, Any], name: str) -> str:
    bounds = (summary.get("intervals") or {}).get(name)
    return f"  [{pct(bounds[0])}, {pct(bounds[1])}]" if bounds else ""


def baseline_line(b: dict[str, Any] | None) -> str:
    """``61.0 % · 0.0 %``: a baseline's verdict accuracy and pass rate."""
    return "-" if not b else f"{pct(b['verdict_accuracy'])} · {pct(b['pass_rate'])}"


def print_comparison(console: Console, c: dict[str, Any]) -> None:
    """The paired difference, its interval, the baselines, and the scenarios that changed."""
    bounds = c["accuracy_diff_interval"]
    interval = f" [{pct(bounds[0])}, {pct(bounds[1])}]" if bounds else ""
    diff = c["accuracy_diff"]
    console.print(
        Text(
            f"{c['paired_scenarios']} paired scenarios · verdict accuracy "
            f"{pct(c['verdict_accuracy_a'])} → {pct(c['verdict_accuracy_b'])} "
            f"(B - A {'-' if diff is None else f'{100 * diff:+.1f} pt'}{interval})"
        )
    )
    verdict = (
        "B is worse" if c["worse"] else "B is better" if c["better"] else "no clear difference"
    )
    console.print(Text(verdict, style="red" if c["worse"] else "green" if c["better"] else ""))
    console.print(
        Text(
            f"baselines (accuracy · pass): keyword guess {baseline_line(c.get('guessability'))}"
            f" · alert only A {baseline_line(c.get('alert_only_a'))}"
            f" · B {baseline_line(c.get('alert_only_b'))}"
        )
    )
    for name, style in (("regressions", "red"), ("improvements", "green")):
        if c[name]:
            console.print(Text(f"{name}: {', '.join(c[name])}", style=style))


def _cost(summary: dict[str, Any]) -> str:
    """``$0.0123``; ``≥ $0.0123`` when some calls had no price; ``unknown`` when none had."""
    unpriced = int(summary.get("unpriced_calls") or 0)
    if unpriced and unpriced >= int(summary.get("model_calls") or 0):
        return "unknown (no price for the model)"
    return ("≥ " if unpriced else "") + f"${summary['cost_usd']:.4f}"
