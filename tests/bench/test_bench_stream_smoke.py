"""``bench/bench_stream.py`` in a tiny configuration, so CI notices when it rots (asserts on
the reported fields, never on timings)."""

from __future__ import annotations

from pathlib import Path

from bench import bench_stream


async def test_stream_bench_tiny(tmp_path: Path) -> None:
    out = await bench_stream.first_seen(
        tmp_path, "stream", alerts=2, seconds=0.4, observe=3.0, latency_s=0.005
    )
    assert out["with_thread_item"] + out["nothing_in_thread"] == 2
    assert out["with_thread_item"] >= 1 and set(out["first_kind"]) <= {"stream", "checklist"}
    assert out["stream_calls"]["chat.startStream"] >= 1
    assert isinstance(out["loadavg_before"], list) and "met" in out
