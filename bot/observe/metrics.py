"""Prometheus metrics of ``socbot serve``, scraped at ``GET /metrics`` (``bot.transport.server``).

One registry per process (``REGISTRY``): investigations by status, verdict and source
and their durations; model calls, tokens and list-price cost by stage and model; tool
calls and their errors; the work queue's depth and oldest wait (read from the database
at each scrape, so every replica reports the whole queue); Slack retries and 429s
(``bot.slack.client``); rows this replica lost to another's takeover after its lease
lapsed (``bot.work._claimed``); alerts the alert policy decided, by outcome (the
database's, ``store.triage.policy``); cases open by severity, the oldest unowned one's age,
the time to acknowledge and to resolve (``store.cases.figures``). Labels never carry user
data: stages, models, tools, verdicts, severities and alert sources (formats' names) are
short words socbot chose.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from core.events import Event, LLMCalled, ToolCalled
from store.cases.figures import live
from store.notify_status import delivery_status

if TYPE_CHECKING:
    from agent.engine import Outcome
    from store.queue.work import WorkQueue
    from store.triage.policy import PolicyStore

__all__ = ["CONTENT_TYPE_LATEST", "REGISTRY", "exposition", "observe", "observe_outcome"]

REGISTRY = CollectorRegistry(auto_describe=True)
_DURATIONS = (1, 5, 15, 30, 60, 120, 300, 600, 1200)

INVESTIGATIONS = Counter(
    "socbot_investigations",
    "Investigations ended, by status, verdict and alert source (chat for questions).",
    ["status", "verdict", "source"],
    registry=REGISTRY,
)
DURATION = Histogram(
    "socbot_investigation_duration_seconds",
    "Wall time of an investigation, by status.",
    ["status"],
    buckets=_DURATIONS,
    registry=REGISTRY,
)
MODEL_CALLS = Counter(
    "socbot_model_calls", "Model calls, by stage and model.", ["stage", "model"], registry=REGISTRY
)
TOKENS = Counter(
    "socbot_model_tokens",
    "Model tokens, by kind (prompt, cached, output, thinking) and model.",
    ["kind", "model"],
    registry=REGISTRY,
)
COST = Counter(
    "socbot_model_cost_usd", "Model cost at list prices, USD, by model.", ["model"],
    registry=REGISTRY,
)  # fmt: skip
TOOL_CALLS = Counter(
    "socbot_tool_calls", "Tool calls, by tool and outcome (ok, error).", ["tool", "outcome"],
    registry=REGISTRY,
)  # fmt: skip
QUEUE_DEPTH = Gauge(
    "socbot_work_queue_depth", "Work rows by state (queued, running), whole queue.", ["state"],
    registry=REGISTRY,
)  # fmt: skip
QUEUE_OLDEST = Gauge(
    "socbot_work_queue_oldest_age_seconds",
    "How long the longest-waiting queued row has waited (0 when none).",
    registry=REGISTRY,
)
SLACK_RETRIES = Counter(
    "socbot_slack_retries", "Slack Web API calls retried, by reason (rate_limit, server_error).",
    ["reason"], registry=REGISTRY,
)  # fmt: skip
SLACK_RATE_LIMITED = Counter(
    "socbot_slack_rate_limited", "Slack Web API answers 429 (retried or not).", registry=REGISTRY
)
POLICY_ALERTS = Gauge(
    "socbot_policy_alerts",
    "Alerts the alert policy decided, by outcome (ignored, suppressed, routed, investigated,"
    " deferred by a budget), whole database.",
    ["outcome"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Gauge(
    "socbot_webhook_deliveries",
    "Webhook deliveries by state (queued, retrying, running, delivered, failed), whole queue.",
    ["state"], registry=REGISTRY,
)  # fmt: skip
CASES_OPEN = Gauge(
    "socbot_cases_open", "Open (unresolved) cases by severity, whole database.", ["severity"],
    registry=REGISTRY,
)  # fmt: skip
CASES_OLDEST_UNOWNED = Gauge(
    "socbot_cases_oldest_unowned_age_seconds",
    "Age of the oldest open case nobody owns (0 when none).",
    registry=REGISTRY,
)
CASES_ACKNOWLEDGE = Gauge(
    "socbot_cases_time_to_acknowledge_seconds",
    "Time from a case opening to its first owner, by quantile, cases of the last 7 days.",
    ["quantile"], registry=REGISTRY,
)  # fmt: skip
CASES_RESOLVE = Gauge(
    "socbot_cases_time_to_resolve_seconds",
    "Time from a case opening to its resolution, by quantile, cases of the last 7 days.",
    ["quantile"], registry=REGISTRY,
)  # fmt: skip
TAKEOVERS = Counter(
    "socbot_lease_takeovers",
    "Work rows this replica lost to another replica after their lease lapsed.",
    registry=REGISTRY,
)


def observe(event: Event) -> None:
    """Count what an investigation's event says (model calls, tokens, cost, tool calls)."""
    if isinstance(event, LLMCalled):
        stage = event.stage.split(" ", 1)[0]  # "step s2" → "step": a bounded label
        MODEL_CALLS.labels(stage, event.model).inc()
        for kind, n in (
            ("prompt", event.prompt_tokens),
            ("cached", event.cached_tokens),
            ("output", event.output_tokens),
            ("thinking", event.thinking_tokens),
        ):
            TOKENS.labels(kind, event.model).inc(n)
        if event.cost_usd is not None:
            COST.labels(event.model).inc(event.cost_usd)
    elif isinstance(event, ToolCalled):
        TOOL_CALLS.labels(event.tool, "ok" if event.ok else "error").inc()


def observe_outcome(outcome: Outcome | None, status: str, source: str, elapsed_s: float) -> None:
    """Count an ended investigation (``outcome`` is ``None`` when it raised)."""
    verdict = outcome.conclusion.verdict if outcome and outcome.conclusion else "none"
    INVESTIGATIONS.labels(status, verdict, source).inc()
    DURATION.labels(status).observe(elapsed_s)


async def exposition(queue: WorkQueue, policy: PolicyStore | None = None) -> bytes:
    """The text format, with the queue's gauges (and the alert policy's counts,
    ``store.triage.policy.PolicyStore.counts``) read from the database now."""
    if policy is not None:
        for outcome, n in (await policy.counts()).items():
            POLICY_ALERTS.labels(outcome).set(n)
    counts = await queue.counts()
    for state, n in counts.items():
        QUEUE_DEPTH.labels(state).set(n)
    oldest = await queue.oldest_queued_at()
    QUEUE_OLDEST.set((datetime.now(UTC) - oldest).total_seconds() if oldest else 0.0)
    deliveries = await delivery_status(queue.db)
    for state, n in deliveries.counts().items():
        WEBHOOK_DELIVERIES.labels(state).set(n)
    await _cases(queue)
    return generate_latest(REGISTRY)


async def _cases(queue: WorkQueue) -> None:
    figures = await live(queue.db)
    CASES_OPEN.clear()  # a severity with no open case left is not reported at its last count
    for severity, n in figures.open_by_severity.items():
        CASES_OPEN.labels(severity).set(n)
    CASES_OLDEST_UNOWNED.set(figures.oldest_unowned_s)
    for gauge, values in (
        (CASES_ACKNOWLEDGE, figures.acknowledge_s),
        (CASES_RESOLVE, figures.resolve_s),
    ):
        gauge.clear()
        for quantile, seconds in values.items():
            gauge.labels(quantile).set(seconds)
