"""Slack acks from a process of their own: no Python work of socbot's can delay them.

``bot.transport.ack_front`` keeps acks off the main event loop with a thread and a loop of its
own, but a thread still waits its turn for the interpreter lock: on a loaded machine,
with investigations parsing, rendering and grounding in the same process, an ack
waited hundreds of milliseconds for it. ``AckProcess`` runs the same ``AckFront`` in
a child process (``python -m cli.serve.ack_process``) that does nothing else, so the
operating system schedules it on its own.

The parent writes one JSON line to the child's stdin (the signing secret, the app's
loopback address, the body limit, where to listen, the log settings and, for the front's
own ``POST /alerts``, the database URL, the webhook's settings and the hand-over token:
never on the command line, which ``ps`` shows) and reads one line back: ``{"port": N}``
once the public port is served, or ``{"error": "..."}``. Then the child waits on its stdin;
end of file — the parent closed it, or died, even by ``kill -9`` — stops the front:
events acked and alerts stored but not yet handed over are handed over first
(``AckFront.stop``).
"""

from __future__ import annotations

import json
import logging
import select
import signal
import subprocess
import sys
from typing import IO

from bot.transport.ack_front import START_TIMEOUT_S, AckFront
from bot.transport.alert_door import AlertDoorSetup
from cli.serve.log_setup import configure_logging
from config.settings import LoggingSettings

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 130.0  # the front hands over what it acked (FORWARD_TIMEOUT_S) first
ANSWER_TIMEOUT_S = START_TIMEOUT_S + 60.0  # the child's imports, then the front's start


class AckProcess:
    """``AckFront`` in a child process, with the same ``start``/``stop``."""

    def __init__(
        self,
        *,
        signing_secret: str,
        backend: str,
        body_limit: int,
        log: LoggingSettings,
        alerts: AlertDoorSetup | None = None,
    ) -> None:
        self._setup = {
            "signing_secret": signing_secret,
            "backend": backend,
            "body_limit": body_limit,
            "log": log.model_dump(mode="json"),
            "alerts": alerts.to_json() if alerts is not None else None,
        }
        self._child: subprocess.Popen[str] | None = None

    def start(self, host: str, port: int) -> int:
        """Start the child and wait until it serves ``host:port``; the port bound
        (``OSError`` when it cannot listen or does not start)."""
        child = subprocess.Popen(
            [sys.executable, "-m", "cli.serve.ack_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._child = child
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(self._setup | {"host": host, "port": port}) + "\n")
        child.stdin.flush()
        answer = _first_line(child.stdout)
        if "port" not in answer:
            self.stop()
            raise OSError(answer.get("error", "the ack front process did not start"))
        return int(answer["port"])

    def stop(self) -> None:
        """Close the child's stdin (its signal to stop) and wait for it to end."""
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning("the ack front process did not stop; killing it")
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def _first_line(stream: IO[str]) -> dict[str, str | int]:
    """The child's one-line answer (an error when it ended or hung without one)."""
    ready, _, _ = select.select([stream], [], [], ANSWER_TIMEOUT_S)
    if not ready:
        return {"error": f"the ack front process did not answer in {ANSWER_TIMEOUT_S:.0f} s"}
    line = stream.readline()  # one whole line: the child prints it with a flush
    try:
        answer = json.loads(line)
    except ValueError:
        return {"error": "the ack front process ended before it listened"}
    return answer if isinstance(answer, dict) else {"error": "the ack front process answered ?"}


def main() -> None:
    """The child: serve acks until stdin ends (see the module docstring)."""
    # Ctrl-C or a SIGTERM to the whole process group reach the parent, which stops
    # the child in its own order (after its last ack is handed over), by closing stdin
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    setup = json.loads(sys.stdin.readline())
    configure_logging(LoggingSettings.model_validate(setup["log"]))
    front = AckFront(
        signing_secret=setup["signing_secret"],
        backend=setup["backend"],
        body_limit=int(setup["body_limit"]),
        alerts=AlertDoorSetup.from_json(setup["alerts"]) if setup.get("alerts") else None,
    )
    try:
        port = front.start(setup["host"], int(setup["port"]))
    except OSError as error:
        print(json.dumps({"error": str(error)}), flush=True)
        return
    print(json.dumps({"port": port}), flush=True)
    sys.stdin.read()  # until the parent closes it or dies
    front.stop()


if __name__ == "__main__":
    main()
