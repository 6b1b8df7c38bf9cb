"""The review's cost (issue 10) against the fake Gemini: latency it adds, tokens it uses.

::

    .venv/bin/python -m bench.bench_review            # ~1 min
    .venv/bin/python -m bench.bench_review --runs 5 --latency 0.3

Three series of the 3-step alert investigation (``bench.scripts``), every model call
answered after ``--latency`` seconds (the critic too, though the light model is
usually faster):

- ``off``: ``review.enabled = false`` (the baseline);
- ``passes``: the first conclusion is grounded and scores 0.9 (one critic call);
- ``rewrites``: the first conclusion quotes an IP no tool returned; the code check
  flags it, the critic scores 0.5, the concluder rewrites it once and the rewrite
  passes (critic, rewrite, critic).

For each: the review's time on the critical path (``timings.review_ms``: from the
draft to the kept conclusion; nothing else runs then), the model calls it made, the
wall time against ``off``, and its share of the investigation's tokens (stages
``critic`` and ``concluder_rewrite`` over all). Writes ``bench/results/review.json``.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench import bench_engine, scripts
from bench.common import RunResult, median, print_table, run_async, write_json
from bench.fake_gemini import Responder

REVIEW_STAGES = ("critic", "concluder_rewrite")


async def _series(
    script: Mapping[str, Responder],
    tmp: Path,
    runs: int,
    latency_s: float,
    review: Mapping[str, Any],
) -> list[RunResult]:
    """``runs`` measured investigations after a warm-up, with ``[review]`` set to ``review``."""
    results, _ = await bench_engine._series(script, tmp, runs, latency_s=latency_s, review=review)
    return results


def _case(name: str, results: list[RunResult], baseline_wall_s: float | None) -> dict[str, Any]:
    def review_tokens(r: RunResult) -> int:
        stages = r.outcome.usage["stages"]
        return sum(
            s["prompt_tokens"] + s["output_tokens"] + s["thinking_tokens"]
            for name, s in stages.items()
            if name in REVIEW_STAGES
        )

    last = results[-1]
    review = last.outcome.review
    by_stage = {
        k: v["calls"] for k, v in last.outcome.usage["stages"].items() if k in REVIEW_STAGES
    }
    wall = median(r.wall_s for r in results)
    total_tokens = median(float(r.outcome.usage["total_tokens"]) for r in results)
    tokens = median(float(review_tokens(r)) for r in results)
    return {
        "case": name,
        "status": review.status if review else None,
        "rewrites": review.rewrites if review else 0,
        "verified": f"{review.verified} of {review.findings}" if review and review.shown else None,
        "review_llm_calls": sum(by_stage.values()),
        "review_calls_by_stage": by_stage,
        "median_review_ms": median(
            float(r.outcome.record["timings"].get("review_ms", 0.0)) for r in results
        ),
        "median_wall_s": round(wall, 4),
        "added_wall_s_vs_off": round(wall - baseline_wall_s, 4) if baseline_wall_s else 0.0,
        "median_total_tokens": round(total_tokens),
        "median_review_tokens": round(tokens),
        "review_token_share": round(tokens / total_tokens, 4) if total_tokens else 0.0,
        "llm_calls": len(last.calls),
    }


async def main(runs: int, latency_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="socbot-bench-") as d:
        tmp = Path(d)
        off = await _series(scripts.three_steps(), tmp, runs, latency_s, {"enabled": False})
        passes = await _series(scripts.three_steps(), tmp, runs, latency_s, {})
        rewrites = await _series(scripts.review_rewrites(), tmp, runs, latency_s, {})
    base = median(r.wall_s for r in off)
    cases = [
        _case("off", off, None),
        _case("passes", passes, base),
        _case("rewrites", rewrites, base),
    ]
    out = {
        "target": "a first draft that passes costs at most one light-model call on the critical "
        "path; report the rewrite's latency and the review's token share",
        "latency_s_per_model_call": latency_s,
        "runs": runs,
        "cases": cases,
        "met": cases[1]["review_llm_calls"] <= 1,
    }
    print_table(
        "Review cost (medians)",
        [
            [
                c["case"],
                c["status"],
                c["review_llm_calls"],
                c["median_review_ms"],
                c["added_wall_s_vs_off"],
                c["median_review_tokens"],
                c["median_total_tokens"],
                c["review_token_share"],
            ]
            for c in cases
        ],
        [
            "case",
            "review",
            "review calls",
            "review ms",
            "wall +s vs off",
            "review tok",
            "total tok",
            "share",
        ],
    )
    write_json("review", out)
    return out


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3, help="measured runs per series")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    args = parser.parse_args()
    run_async(lambda: main(args.runs, args.latency))


if __name__ == "__main__":
    cli()
