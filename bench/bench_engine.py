"""Engine benchmarks (targets 1-4 of issue 5) against the fake Gemini and fake intel.

::

    .venv/bin/python -m bench.bench_engine            # all four, ~1.5 min
    .venv/bin/python -m bench.bench_engine --only 1 --runs 9

1. overhead  — wall / critical path of a 3-step plan at 300 ms per model call
2. parallel  — 3 independent steps vs the same script with max_parallel_steps = 1
3. llm_calls — calls per planned investigation vs the seed-004 sequential baseline
4. context   — classifier/planner prompt tokens with 0..200 prior turns; step prompt
               growth against the earlier steps' findings

Each writes ``bench/results/engine_<name>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.engine import Request
from bench import scripts
from bench.common import (
    RunResult,
    TraceTimer,
    alert_request,
    clear_intel_cache,
    measure,
    median,
    print_table,
    remote,
    run_async,
    runtime,
    write_json,
)
from bench.fake_gemini import Responder, tokens

QUESTION = "Did anyone log in from 185.220.101.42 and what did they do afterwards?"


async def _series(
    script: Mapping[str, Responder],
    tmp: Path,
    runs: int,
    *,
    latency_s: float,
    request: Request | None = None,
    trace_off: bool = False,
    **limits: Any,
) -> tuple[list[RunResult], list[float]]:
    """One warm runtime; a warm-up run, then ``runs`` measured runs (intel cache cleared)."""
    async with (
        remote(script, latency_s=latency_s) as rem,
        runtime(rem, tmp, **limits) as (
            rt,
            timer,
        ),
    ):
        trace = TraceTimer(rt, disabled=trace_off)
        results, trace_s = [], []
        for i in range(runs + 1):
            await clear_intel_cache(rt)
            trace.spent.clear()
            result = await measure(rt, timer, rem, request or alert_request())
            if i:  # the first run warms templates, DuckDB and connections
                results.append(result)
                trace_s.append(sum(trace.spent))
        return results, trace_s


def _labelled(r: RunResult) -> list[tuple[str, float, float]]:
    return [(f"llm {c.stage}", c.start, c.end) for c in r.calls] + [
        (f"tool {n}", s, e) for n, s, e in r.tools
    ]


def _median_run(results: list[RunResult]) -> RunResult:
    ordered = sorted(results, key=lambda r: r.wall_s / r.critical_s)
    return ordered[len(ordered) // 2]


async def overhead(tmp: Path, runs: int, latency_s: float) -> dict[str, Any]:
    """Target 1: wall <= 1.05 x critical path."""
    script = scripts.three_steps()
    results, trace_s = await _series(script, tmp, runs, latency_s=latency_s)
    diag, _ = await _series(script, tmp, runs, latency_s=latency_s, trace_off=True)
    ratios = [r.wall_s / r.critical_s for r in results]
    diag_ratios = [r.wall_s / r.critical_s for r in diag]
    mid = _median_run(results)
    out = {
        "target": "wall <= 1.05 x critical path (3-step plan, 300 ms per model call)",
        "latency_s": latency_s,
        "runs": runs,
        "median_wall_s": round(median(r.wall_s for r in results), 4),
        "median_critical_path_s": round(median(r.critical_s for r in results), 4),
        "median_ratio": round(median(ratios), 4),
        "ratios": [round(x, 4) for x in ratios],
        "met": median(ratios) <= 1.05,
        "median_trace_write_s": round(median(trace_s), 4),
        "diagnostic_trace_recorder_off_median_ratio": round(median(diag_ratios), 4),
        "median_run": mid.summary(),
        "median_run_gaps_ms": mid.gaps(),
    }
    print_table(
        "Target 1 — orchestration overhead (medians)",
        [
            ["wall s", out["median_wall_s"]],
            ["critical path s", out["median_critical_path_s"]],
            ["wall / critical", out["median_ratio"]],
            ["trace writes s (sum, overlapped)", out["median_trace_write_s"]],
            [
                "ratio with trace recorder off (diag)",
                out["diagnostic_trace_recorder_off_median_ratio"],
            ],
            ["target ≤ 1.05 met", out["met"]],
        ],
        ["figure", "value"],
    )
    _print_stages(mid)
    return out


def _print_stages(r: RunResult) -> None:
    rows: list[list[object]] = [
        [
            stage,
            row["calls"],
            row["prompt_tokens"],
            row["output_tokens"],
            row["thinking_tokens"],
            row["cached_tokens"],
            row["latency_s"],
        ]
        for stage, row in r.summary()["stages"].items()
    ]
    tools = r.summary()["tools"]
    rows += [[f"tool {n}", t["calls"], "", "", "", "", t["time_s"]] for n, t in tools.items()]
    print_table(
        "Median run — per stage",
        rows,
        ["stage", "calls", "prompt tok", "output tok", "thinking tok", "cached tok", "time s"],
    )


async def parallel(tmp: Path, runs: int, latency_s: float) -> dict[str, Any]:
    """Target 2: 3 independent steps <= 0.5 x the same script one step at a time."""
    script = scripts.three_steps()
    par, _ = await _series(script, tmp, runs, latency_s=latency_s)
    seq, _ = await _series(script, tmp, runs, latency_s=latency_s, max_parallel_steps=1)

    def wave_s(r: RunResult) -> float:
        return float(sum(w["duration_ms"] for w in r.outcome.record["waves"])) / 1000

    whole = median(r.wall_s for r in par) / median(r.wall_s for r in seq)
    waves = median(wave_s(r) for r in par) / median(wave_s(r) for r in seq)
    out = {
        "target": "3 independent steps finish in <= 0.5 x the wall time with max_parallel_steps=1",
        "latency_s": latency_s,
        "runs": runs,
        "parallel_median_wall_s": round(median(r.wall_s for r in par), 4),
        "sequential_median_wall_s": round(median(r.wall_s for r in seq), 4),
        "whole_investigation_ratio": round(whole, 4),
        "parallel_median_wave_s": round(median(wave_s(r) for r in par), 4),
        "sequential_median_wave_s": round(median(wave_s(r) for r in seq), 4),
        "step_phase_ratio": round(waves, 4),
        "met_whole_investigation": whole <= 0.5,
        "met_step_phase": waves <= 0.5,
        "llm_calls_each": len(par[0].calls),
        "note": "planner and reflector (2 x latency; the conclusion is speculated beside the "
        "reflection) run once either way; the whole-run ratio can reach 0.5 only when one "
        "step takes at least that long",
    }
    print_table(
        "Target 2 — parallel steps (medians)",
        [
            [
                "whole investigation",
                out["parallel_median_wall_s"],
                out["sequential_median_wall_s"],
                out["whole_investigation_ratio"],
            ],
            [
                "step phase (waves)",
                out["parallel_median_wave_s"],
                out["sequential_median_wave_s"],
                out["step_phase_ratio"],
            ],
        ],
        ["phase", "parallel s", "one at a time s", "ratio (≤ 0.5)"],
    )
    return out


async def llm_calls(tmp: Path, latency_s: float) -> dict[str, Any]:
    """Target 3: calls per planned investigation vs the seed-004 sequential baseline."""
    question = Request(conversation_id=f"bench-{uuid.uuid4().hex}", text=QUESTION)
    cases = [
        ("alert, 3 independent steps", scripts.three_steps(), None),
        ("question, 3 independent steps", scripts.three_steps(), question),
        ("alert, 3 chained steps", scripts.chain(3), None),
    ]
    rows, out_cases = [], []
    for name, script, request in cases:
        (result,), _ = await _series(script, tmp, 1, latency_s=latency_s, request=request)
        stages = result.summary()["stages"]
        n_steps = len(result.outcome.plan.steps) if result.outcome.plan else 0
        step_calls = stages.get("step", {}).get("calls", 0)
        baseline = (
            1 + 1 + step_calls + n_steps + 1
        )  # classifier, plan, loops, reflections, conclusion
        socbot = len(result.calls)
        case = {
            "case": name,
            "socbot_calls": socbot,
            "seed004_baseline_calls": baseline,
            "by_stage": {k: v["calls"] for k, v in stages.items()},
            "classifier_calls": stages.get("classifier", {}).get("calls", 0),
            "total_tokens": result.outcome.usage.get("total_tokens"),
        }
        out_cases.append(case)
        by_stage = " ".join(f"{k}={v}" for k, v in case["by_stage"].items())
        rows.append([name, socbot, baseline, by_stage])
    print_table(
        "Target 3 — LLM calls per planned investigation",
        rows,
        ["case", "socbot", "seed-004 baseline", "socbot by stage"],
    )
    return {
        "target": "no more calls than classifier + plan + step loops + 1 reflection/step + "
        "conclusion; alerts skip the classifier",
        "cases": out_cases,
        "met": all(c["socbot_calls"] <= c["seed004_baseline_calls"] for c in out_cases)
        and all(c["classifier_calls"] == 0 for c in out_cases if c["case"].startswith("alert")),
    }


HISTORY_Q = "What did {ip} do on web-server-prod-01 around 05:{m:02d} UTC? Check the flows too."
HISTORY_A = (
    "Objective: establish whether {ip} is malicious.\n\n*Verdict: True positive* (high, "
    "high confidence)\n" + "Key finding with evidence from the logs and threat intel. " * 25
)


async def _history_case(tmp: Path, turns: int, latency_s: float) -> dict[str, Any]:
    script = scripts.three_steps()
    async with remote(script, latency_s=latency_s) as rem, runtime(rem, tmp) as (rt, timer):
        conversation = f"bench-{uuid.uuid4().hex}"
        for i in range(turns):
            ip = f"203.0.113.{i % 250}"
            await rt.history.append(
                conversation, HISTORY_Q.format(ip=ip, m=i % 60), HISTORY_A.format(ip=ip), None
            )
        request = Request(conversation_id=conversation, text=QUESTION)
        result = await measure(rt, timer, rem, request)
        by = {c.stage.split(" ")[0]: c for c in result.calls}
        return {
            "prior_turns": turns,
            "history_chars_limit": rt.settings.limits.history_chars,
            "classifier_prompt_tokens": by["classifier"].prompt_tokens,
            "planner_prompt_tokens": by["planner"].prompt_tokens,
        }


async def context(tmp: Path, latency_s: float) -> dict[str, Any]:
    """Target 4: history compaction bounds classifier/planner prompts; steps grow by findings."""
    history = [await _history_case(tmp, n, latency_s) for n in (0, 10, 50, 200)]
    base = history[0]
    allowance = tokens(base["history_chars_limit"]) + 500  # the history plus its fencing
    for h in history:
        h["classifier_budget"] = base["classifier_prompt_tokens"] + allowance
        h["planner_budget"] = base["planner_prompt_tokens"] + allowance
        h["within_budget"] = (
            h["classifier_prompt_tokens"] <= h["classifier_budget"]
            and h["planner_prompt_tokens"] <= h["planner_budget"]
        )
    print_table(
        "Target 4a — prompt tokens vs prior turns in the thread",
        [
            [
                h["prior_turns"],
                h["classifier_prompt_tokens"],
                h["classifier_budget"],
                h["planner_prompt_tokens"],
                h["planner_budget"],
                h["within_budget"],
            ]
            for h in history
        ],
        ["turns", "classifier", "budget", "planner", "budget", "within"],
    )
    steps = await _step_growth(tmp, latency_s)
    met = all(h["within_budget"] for h in history) and steps["met"]
    return {
        "target": "50 prior turns: classifier and planner prompts within a fixed budget; step "
        "prompts grow only by earlier findings",
        "counted": "prompt tokens = ceil(chars / 4) of the JSON request the fake server receives "
        "(system instruction + contents + tool declarations); step growth in unescaped "
        "text characters (system + text parts)",
        "history": history,
        "steps": steps,
        "met": met,
    }


async def _step_growth(tmp: Path, latency_s: float, n: int = 6) -> dict[str, Any]:
    (result,), _ = await _series(
        scripts.chain(n), tmp, 1, latency_s=latency_s, max_waves=n, max_steps=max(8, n)
    )
    plan = result.outcome.plan
    assert plan is not None
    findings = {s.id: len(s.findings) for s in plan.steps}
    first_calls = {}
    for c in result.calls:
        if c.stage.startswith("step ") and c.stage not in first_calls:
            first_calls[c.stage] = c  # the first call of a step: before its own tool results
    rows: list[list[object]] = []
    out: list[dict[str, Any]] = []
    worst = 0.0
    base = first_calls["step s1"].text_chars
    s1_calls = [c.prompt_chars for c in result.calls if c.stage == "step s1"]
    for k in range(1, n + 1):
        call = first_calls.get(f"step s{k}")
        if call is None:
            continue
        earlier = sum(findings[f"s{j}"] for j in range(1, k))
        growth = call.text_chars - base
        per_step = (growth - earlier) / (k - 1) if k > 1 else 0.0
        out.append(
            {
                "step": f"s{k}",
                "first_prompt_chars": call.text_chars,
                "growth_chars": growth,
                "earlier_findings_chars": earlier,
                "other_growth_per_earlier_step_chars": round(per_step, 1),
            }
        )
        rows.append([f"s{k}", call.text_chars, growth, earlier, round(per_step, 1)])
        worst = max(worst, per_step)
    print_table(
        "Target 4b — step prompt (first call) vs earlier findings, 6 chained steps",
        rows,
        ["step", "prompt chars", "growth", "earlier findings", "other growth / earlier step"],
    )
    return {
        "per_step": out,
        "step_s1_request_chars_before_and_after_its_tool_result": s1_calls,
        "worst_other_growth_per_earlier_step_chars": round(worst, 1),
        "met": worst <= 400,
        "criterion": "besides the findings, each earlier step adds <= 400 chars "
        "(its id, status, description and fencing), never its tool transcript",
    }


async def main(only: set[int], runs: int, latency_s: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="socbot-bench-") as d:
        tmp = Path(d)
        if 1 in only:
            results["overhead"] = await overhead(tmp, runs, latency_s)
            write_json("engine_overhead", results["overhead"])
        if 2 in only:
            results["parallel"] = await parallel(tmp, runs, latency_s)
            write_json("engine_parallel", results["parallel"])
        if 3 in only:
            results["llm_calls"] = await llm_calls(tmp, 0.05)
            write_json("engine_llm_calls", results["llm_calls"])
        if 4 in only:
            results["context"] = await context(tmp, 0.02)
            write_json("engine_context", results["context"])
    return results


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", default="1,2,3,4", help="targets to run, e.g. 1,3")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per series")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",") if x.strip()}
    run_async(lambda: main(only, args.runs, args.latency))


if __name__ == "__main__":
    cli()
