"""Two replicas (two socbot apps, two engines) on one real PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

from store.db.engine import Database
from tests.fakes.slack_api import FakeSlackAPI
from tests.pg_server import PostgresServer
from tests.slack_support import RecordingInvestigate, SlackHarness, load, make_settings


async def test_a_redelivery_to_the_other_replica_starts_nothing(
    fake: FakeSlackAPI, tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.create_database("replicas_redelivery")
    settings = make_settings(tmp_path, fake.base_url).model_copy(update={"database_url": url})
    first, second = Database(url), Database(url)
    await first.create()
    ran_a, ran_b = RecordingInvestigate(), RecordingInvestigate()
    retry = load("app_mention_retry.json")
    async with (
        SlackHarness(fake, settings, ran_a, db=first) as a,
        SlackHarness(fake, settings, ran_b, db=second) as b,
    ):
        assert (await a.event(load("app_mention.json")))[0] == 200
        assert (await b.event(retry["body"], retry["headers"]))[0] == 200  # Slack's retry
        assert (await b.event(load("message_mention_twin.json")))[0] == 200
        await a.settle()
        await b.settle()
        assert await a.app.coordinator.queue.counts() == {"queued": 0, "running": 0}
    assert len(ran_a.calls) + len(ran_b.calls) == 1
    await first.close()
    await second.close()


async def test_a_flood_of_mentions_over_two_replicas_runs_each_once(
    fake: FakeSlackAPI, tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.create_database("replicas_flood")
    settings = make_settings(tmp_path, fake.base_url).model_copy(update={"database_url": url})
    first, second = Database(url), Database(url)
    await first.create()
    ran_a, ran_b = RecordingInvestigate(), RecordingInvestigate()
    async with (
        SlackHarness(fake, settings, ran_a, db=first) as a,
        SlackHarness(fake, settings, ran_b, db=second) as b,
    ):
        for i in range(12):
            event = load("app_mention.json")
            event["event_id"] = f"Ev0FLOOD{i:02d}"
            event["event"]["ts"] = f"1700000200.{i:06d}"
            event["event"]["user"] = f"UANALYST{i % 4}"
            event["event"].pop("client_msg_id", None)
            replica = a if i % 2 else b
            assert (await replica.event(event))[0] == 200
            # the same delivery reaches the other replica too (a load balancer's retry)
            assert (await (b if i % 2 else a).event(event))[0] == 200
        for _ in range(3):
            await a.settle()
            await b.settle()
    threads = [call[0].thread_ts for call in ran_a.calls + ran_b.calls]
    assert sorted(threads) == [f"1700000200.{i:06d}" for i in range(12)]  # each exactly once
    await first.close()
    await second.close()
