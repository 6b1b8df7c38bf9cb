"""The load of ``bench.bench_replicas`` and ``bench.bench_front``, sent and timed from a
process of its own.

Reads ``{"batch": [[url, body, headers], ...], "rate": r}`` on stdin, POSTs each request
at its time (``i / rate`` seconds after the start; Slack events signed when sent) and
writes ``{"answers": [[seconds, status, path, late, server_timing], ...], "lags": [...]}``
on stdout: the time from sending a request to its response, as the client sees it; how
late the request left against its time (a sender starved of CPU sends late and reads
answers late: its own delay is in ``seconds``); the answer's ``Server-Timing`` header
(the server's own account, ``""`` when absent); and how late this process's loop woke a
10 ms sleep during the load (sampled every 10 ms) — the sender's share of any figure.
``"nice": n`` in the job (negative) raises the sender's priority where that is allowed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import httpx

from bench.bench_slack import signed

Request = tuple[str, str, dict[str, str]]  # url, body, headers
Answer = tuple[float, int, str, float, str]  # seconds, status, path, late, Server-Timing
LAG_TICK_S = 0.01


async def _lags(out: list[float]) -> None:
    while True:
        before = time.monotonic()
        await asyncio.sleep(LAG_TICK_S)
        out.append(time.monotonic() - before - LAG_TICK_S)


async def send(batch: list[Request], rate: float) -> tuple[list[Answer], list[float]]:
    """POST each request at its time (events signed when sent); the answers and the
    sender's loop lags (see the module docstring)."""
    results: list[Answer] = []
    lags: list[float] = []
    # one connection per request in flight, however many: none waits for the pool
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one(url: str, body: str, headers: dict[str, str], due: float) -> None:
            if url.endswith("/slack/events"):
                headers = {**signed(body), **headers}
            sent = time.monotonic()
            path = url.rsplit("/", 1)[-1]
            try:
                response = await client.post(url, content=body, headers=headers)
            except httpx.HTTPError as error:  # status 0: no answer (said, not a crash)
                results.append((time.monotonic() - sent, 0, path, sent - due, repr(error)))
                return
            took = time.monotonic() - sent
            timing = response.headers.get("server-timing", "")
            results.append((took, response.status_code, path, max(0.0, sent - due), timing))

        sampler = asyncio.create_task(_lags(lags))
        start = time.monotonic()
        tasks = []
        for i, (url, body, headers) in enumerate(batch):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(url, body, headers, due)))
        await asyncio.gather(*tasks)
        sampler.cancel()
    return results, lags


def raise_priority(nice: int) -> int:
    """This process's niceness lowered by ``-nice`` when allowed (root, CAP_SYS_NICE): the
    sender stands for Slack or a SIEM on another machine, which socbot's load never
    starves. Returns the niceness in force."""
    if nice < 0:
        try:
            os.nice(nice)
        except PermissionError:
            pass  # said by the niceness returned
    return os.nice(0)


def main() -> None:
    job = json.loads(sys.stdin.read())
    niceness = raise_priority(int(job.get("nice", 0)))
    batch = [(str(u), str(b), dict(h)) for u, b, h in job["batch"]]
    answers, lags = asyncio.run(send(batch, float(job["rate"])))
    print(json.dumps({"answers": answers, "lags": lags, "nice": niceness}))


if __name__ == "__main__":
    main()
