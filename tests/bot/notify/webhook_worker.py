"""A socbot replica that only sends webhook deliveries: the process the kill -9 test kills.

``python webhook_worker.py DATABASE_URL HOOK_URL``: the real work queue, coordinator and
delivery runner (lease 1 s) on the given database, until killed. The secret is read
from ``TEST_HOOK_SECRET``, as a deployment would read it.
"""

from __future__ import annotations

import asyncio
import sys

import httpx

from bot.notify.delivery import DeliveryRunner
from bot.notify.notifier import NOTIFY_KIND
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from config.notify_settings import NotifySettings, WebhookSettings
from store.db.engine import Database
from store.queue.work import WorkQueue


def settings(url: str) -> NotifySettings:
    hook = WebhookSettings(name="cases", url=url, secret="${TEST_HOOK_SECRET}")
    return NotifySettings(webhooks=[hook])


async def main(database_url: str, hook_url: str) -> None:
    db = Database(database_url)
    async with httpx.AsyncClient() as http:
        queue = WorkQueue(db, lease_s=1.0)
        coordinator = Coordinator(2, Silent("test"), queue, replica="doomed", poll_s=0.05)
        runner = DeliveryRunner(settings(hook_url), http)
        coordinator.register({NOTIFY_KIND: runner}, reporter=runner.reporter)
        coordinator.start()
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
