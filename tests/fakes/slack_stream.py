"""The streaming methods of the Slack fake: ``chat.startStream`` / ``appendStream`` /
``stopStream``, answered as Slack answers them (``tests/fakes/slack_api.py`` registers them).

A workspace of the fake refuses streaming until a test allows it (``fake.streams.allow()``):
it answers ``unknown_method`` as it did before it knew these methods, so tests written
before streaming see the checklist they always saw. ``refuse(error)`` makes the workspace
refuse with another code (``feature_not_enabled``, ``not_allowed``…),
``refuse_channel(channel, error)`` one channel only (``method_not_supported_for_channel_type``).

Like Slack: a stream is a reply in a thread (``thread_ts`` required); in a channel it
needs ``recipient_team_id`` and ``recipient_user_id`` (``missing_recipient_team_id`` /
``missing_recipient_user_id``); an append or stop naming a ts that is no stream answers
``message_not_found``, one after the stop ``message_not_in_streaming_state``; a call
carrying more than 12,000 markdown characters ``msg_too_long``; a chunk of an unknown
type or a task without id, title or valid status ``invalid_arguments``. A task's title and
status replace what was shown, its ``details`` append. The stream is a message of the
thread (``conversations.replies`` returns it, ``streaming`` while open).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fakes.block_kit import STREAM_CHARS

if TYPE_CHECKING:
    from tests.fakes.slack_api import Call, FakeSlackAPI, Handler

TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
CHUNK_TYPES = {"markdown_text", "task_update", "plan_update", "blocks"}


@dataclass
class Stream:
    """One streamed message as Slack holds it."""

    channel: str
    ts: str
    thread_ts: str
    recipient: tuple[str | None, str | None]
    display: str | None
    text: str = ""
    title: str | None = None
    tasks: dict[str, dict[str, str]] = field(default_factory=dict)  # id → title/status/details
    stopped: bool = False
    calls: int = 0


class FakeStreams:
    """The fake workspace's streams and its streaming switch."""

    def __init__(self, fake: FakeSlackAPI) -> None:
        self.fake = fake
        self.refusal: str | None = "unknown_method"  # None: streaming allowed
        self.channel_refusals: dict[str, str] = {}
        self.streams: dict[str, Stream] = {}

    def allow(self) -> None:
        self.refusal = None

    def refuse(self, error: str = "feature_not_enabled") -> None:
        self.refusal = error

    def refuse_channel(self, channel: str, error: str) -> None:
        self.channel_refusals[channel] = error

    def in_thread(self, channel: str, thread_ts: str) -> list[Stream]:
        return [
            s for s in self.streams.values() if (s.channel, s.thread_ts) == (channel, thread_ts)
        ]

    def handlers(self) -> dict[str, Handler]:
        return {
            "chat.startStream": self._start,
            "chat.appendStream": self._append,
            "chat.stopStream": self._stop,
        }

    # the methods -------------------------------------------------------------

    def _start(self, call: Call) -> dict[str, Any]:
        args = call.args
        channel = str(args.get("channel") or "")
        refused = self.refusal or self.channel_refusals.get(channel)
        if refused:
            return _error(refused)
        if not channel:
            return _error("channel_not_found")
        if not args.get("thread_ts"):
            return _error("invalid_arguments")
        if channel.startswith(("C", "G")) and not args.get("recipient_team_id"):
            return _error("missing_recipient_team_id")
        if channel.startswith(("C", "G")) and not args.get("recipient_user_id"):
            return _error("missing_recipient_user_id")
        problem = _chunk_problem(args)
        if problem:
            return _error(problem)
        ts = self.fake._next_ts()
        recipient = (args.get("recipient_team_id"), args.get("recipient_user_id"))
        stream = Stream(
            channel, ts, str(args["thread_ts"]), recipient, args.get("task_display_mode")
        )
        self.streams[ts] = stream
        self._apply(stream, args)
        self.fake.add_message(
            channel, ts, stream.text, user=self.fake.bot_user_id, thread_ts=stream.thread_ts
        )
        self._sync(stream)
        return {"ok": True, "channel": channel, "ts": ts}

    def _append(self, call: Call) -> dict[str, Any]:
        return self._continue(call, stop=False)

    def _stop(self, call: Call) -> dict[str, Any]:
        return self._continue(call, stop=True)

    def _continue(self, call: Call, *, stop: bool) -> dict[str, Any]:
        if self.refusal:
            return _error(self.refusal)
        stream = self.streams.get(str(call.args.get("ts") or ""))
        if stream is None or stream.channel != call.args.get("channel"):
            return _error("message_not_found")
        if stream.stopped:
            return _error("message_not_in_streaming_state")
        problem = _chunk_problem(call.args)
        if problem:
            return _error(problem)
        self._apply(stream, call.args)
        if stop:
            stream.stopped = True
        self._sync(stream)
        return {"ok": True, "channel": stream.channel, "ts": stream.ts}

    # the state ---------------------------------------------------------------

    def _apply(self, stream: Stream, args: dict[str, Any]) -> None:
        stream.calls += 1
        stream.text += str(args.get("markdown_text") or "")
        for chunk in args.get("chunks") or []:
            if chunk["type"] == "markdown_text":
                stream.text += str(chunk.get("text") or "")
            elif chunk["type"] == "plan_update":
                stream.title = str(chunk["title"])
            elif chunk["type"] == "task_update":
                task = stream.tasks.setdefault(str(chunk["id"]), {"details": ""})
                task.update(title=str(chunk["title"]), status=str(chunk["status"]))
                task["details"] += str(chunk.get("details") or "")

    def _sync(self, stream: Stream) -> None:
        from tests.fakes.slack_api import BOT_ID  # (imports this module)

        for message in self.fake.messages:
            if message.channel == stream.channel and message.ts == stream.ts:
                message.text = stream.text
                message.extra.update(bot_id=BOT_ID, streaming=not stream.stopped)


def _chunk_problem(args: dict[str, Any]) -> str | None:
    """Why Slack would refuse these chunks, if it would."""
    chunks = args.get("chunks") or []
    if not isinstance(chunks, list):
        return "invalid_arguments"
    markdown = len(str(args.get("markdown_text") or ""))
    for chunk in chunks:
        if not isinstance(chunk, dict) or chunk.get("type") not in CHUNK_TYPES:
            return "invalid_arguments"
        if chunk["type"] == "markdown_text":
            markdown += len(str(chunk.get("text") or ""))
        if chunk["type"] == "plan_update" and not chunk.get("title"):
            return "invalid_arguments"
        if chunk["type"] == "task_update" and (
            not chunk.get("id")
            or not chunk.get("title")
            or chunk.get("status") not in TASK_STATUSES
        ):
            return "invalid_arguments"
    return "msg_too_long" if markdown > STREAM_CHARS else None


def _error(code: str) -> dict[str, Any]:
    return {"ok": False, "error": code}
