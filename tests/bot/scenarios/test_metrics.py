"""``GET /metrics`` of ``socbot serve``, scraped while an alert is investigated and after,
and read with prometheus_client's own text parser: investigations by status, verdict and
source, durations, model calls, tokens, tool calls and errors, the queue's depth."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from tests.cli.test_show_trace import PLAN, model_with_a_failing_tool
from tests.fakes.model import ModelRequest, json_response
from tests.fakes.signals import WAIT_S
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import WEBHOOK_TOKEN, make_settings, serving_http

ALERT = Path(__file__).resolve().parents[2] / "fixtures" / "alerts" / "leveret-scc.json"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition: (name, sorted labels) → value."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return sum(v for (n, ls), v in found.items() if n == name and set(labels.items()) <= set(ls))


async def scrape(http: aiohttp.ClientSession, port: int) -> dict[Any, float]:
    async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        return samples(await response.text())


async def test_metrics_during_and_after_an_investigation(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    planning = asyncio.Event()
    go_on = asyncio.Event()

    async def planner(_request: ModelRequest) -> Any:
        planning.set()
        await go_on.wait()  # the investigation is running while the test scrapes
        return json_response(PLAN)

    model = model_with_a_failing_tool()  # one good and one refused tool call
    model.queues["planner"] = [planner]
    async with serving_http(make_settings(tmp_path, fake.base_url), model) as port:
        try:
            async with aiohttp.ClientSession() as http:
                before = await scrape(http, port)
                headers = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
                alert = json.loads(ALERT.read_text())
                async with http.post(
                    f"http://127.0.0.1:{port}/alerts", json=alert, headers=headers
                ) as posted:
                    assert posted.status == 202
                await asyncio.wait_for(planning.wait(), WAIT_S)

                during = await scrape(http, port)
                assert total(during, "socbot_work_queue_depth", state="running") == 1
                assert total(during, "socbot_work_queue_oldest_age_seconds") == 0  # none queued
                assert total(during, "socbot_model_calls_total") >= total(
                    before, "socbot_model_calls_total"
                )

                go_on.set()
                ended = "socbot_investigations_total"
                for _ in range(200):
                    after = await scrape(http, port)
                    settled = total(after, "socbot_work_queue_depth", state="running") == 0
                    if settled and total(after, ended) > total(before, ended):
                        break  # the outcome is posted and its work row settled
                    await asyncio.sleep(0.05)
        finally:
            go_on.set()  # before serve stops: the run it waits for ends first

    def grew(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert grew(ended, status="concluded", verdict="true_positive", source="scc") == 1
    assert grew("socbot_investigation_duration_seconds_count", status="concluded") == 1
    assert grew("socbot_model_calls_total", stage="planner") == 1
    assert grew("socbot_model_calls_total", stage="step") == 2
    assert grew("socbot_model_tokens_total", kind="prompt") > 0
    assert grew("socbot_tool_calls_total", tool="search_past_alerts", outcome="ok") == 1
    assert grew("socbot_tool_calls_total", tool="search_past_alerts", outcome="error") == 1
    assert total(after, "socbot_work_queue_depth", state="running") == 0
