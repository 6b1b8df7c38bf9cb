"""This replica's view of the shared work queue: its limits from the settings, its name."""

from __future__ import annotations

import os
import socket
import uuid

from config.settings import Settings
from store.db.engine import Database
from store.queue.work import QueueLimits, WorkQueue


def work_queue(settings: Settings, db: Database) -> WorkQueue:
    """The shared work queue with the limits of ``settings`` (``store.queue.work``)."""
    work = settings.work
    limits = QueueLimits(
        running=settings.slack.max_concurrent_investigations,
        running_per_user=work.max_running_per_user,
        running_per_channel=work.max_running_per_channel,
        queued_per_user=work.max_queued_per_user,
        queued_per_channel=work.max_queued_per_channel,
        running_background=settings.learning.max_running,
    )
    return WorkQueue(db, limits, lease_s=work.lease_s, max_attempts=work.max_attempts)


def replica_limit(settings: Settings) -> int:
    """This replica's runs at once: ``work.max_running_per_replica``, never above the
    limit that holds across all replicas (``slack.max_concurrent_investigations``)."""
    every = settings.slack.max_concurrent_investigations
    return min(settings.work.max_running_per_replica or every, every)


def default_replica_id() -> str:
    """host:pid:random — unique even for a container restarted as pid 1 on one host."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
