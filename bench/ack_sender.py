"""The load of ``bench.bench_replicas``, sent and timed from a process of its own.

Reads ``{"batch": [[url, body, headers], ...], "rate": r}`` on stdin, POSTs each request
at its time (``i / rate`` seconds after the start; Slack events signed when sent) and
writes ``[[seconds, status, path], ...]`` on stdout: the time from sending a request to
its response, as the client sees it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx

from bench.bench_slack import signed

Request = tuple[str, str, dict[str, str]]  # url, body, headers


async def send(batch: list[Request], rate: float) -> list[tuple[float, int, str]]:
    """POST each request at its time (events signed when sent); (seconds, status, path)."""
    results: list[tuple[float, int, str]] = []
    async with httpx.AsyncClient(timeout=60) as client:

        async def one(url: str, body: str, headers: dict[str, str]) -> None:
            if url.endswith("/slack/events"):
                headers = {**signed(body), **headers}
            sent = time.monotonic()
            response = await client.post(url, content=body, headers=headers)
            path = url.rsplit("/", 1)[-1]
            results.append((time.monotonic() - sent, response.status_code, path))

        start = time.monotonic()
        tasks = []
        for i, (url, body, headers) in enumerate(batch):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(url, body, headers)))
        await asyncio.gather(*tasks)
    return results


def main() -> None:
    job = json.loads(sys.stdin.read())
    batch = [(str(u), str(b), dict(h)) for u, b, h in job["batch"]]
    print(json.dumps(asyncio.run(send(batch, float(job["rate"])))))


if __name__ == "__main__":
    main()
