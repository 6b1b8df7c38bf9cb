"""``--record DIR`` and ``--replay DIR``: every model answer of a run, kept and served again.

Both wrap the model backend (``agent.model.llm.ModelBackend``). A call is keyed by the
attempt it belongs to (``ATTEMPT``, set by the runner for each scenario and repeat),
its stage (``agent.prompts.stage_named``: ``planner``, ``step s1``, ``concluder``…) and
its rank among that attempt's calls of that stage. Requests themselves are not
compared: their fences are random per request. ``DIR/<scenario>__r<k>.jsonl`` holds
one line per call: ``{"stage", "n", "response"}`` or ``{"stage", "n", "error"}``.
A replayed run makes no network call and scores exactly as the recorded one.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from google.genai import types

from agent.errors import LLMUnavailable
from agent.model.llm import ModelBackend
from agent.prompts import stage_named

ATTEMPT: ContextVar[str] = ContextVar("eval_attempt", default="unscoped")


def _stage(contents: list[types.Content], config: types.GenerateContentConfig) -> str:
    system: Any = config.system_instruction
    if isinstance(system, types.Content):
        system = "".join(p.text or "" for p in system.parts or [])
    first = "".join(p.text or "" for p in contents[0].parts or []) if contents else ""
    return stage_named(system if isinstance(system, str) else "", first)


class _Keys:
    """The rank of each (attempt, stage) call, in the order the calls are made."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = defaultdict(int)

    def next(
        self, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> tuple[str, str, int]:
        attempt, stage = ATTEMPT.get(), _stage(contents, config)
        n = self.counts[(attempt, stage)]
        self.counts[(attempt, stage)] = n + 1
        return attempt, stage, n


class Recorder:
    """Passes every call to ``inner`` and appends its answer (or error) to the folder."""

    def __init__(self, inner: ModelBackend, folder: Path) -> None:
        self.inner = inner
        self.folder = folder
        self.keys = _Keys()
        folder.mkdir(parents=True, exist_ok=True)

    def forget(self, attempt: str) -> None:
        """Start ``attempt`` afresh (a resumed run repeats an unfinished attempt)."""
        (self.folder / f"{attempt}.jsonl").unlink(missing_ok=True)
        for key in [k for k in self.keys.counts if k[0] == attempt]:
            del self.keys.counts[key]

    async def generate_content(
        self, *, model: str, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> types.GenerateContentResponse:
        attempt, stage, n = self.keys.next(contents, config)
        line: dict[str, Any] = {"stage": stage, "n": n}
        try:
            response = await self.inner.generate_content(
                model=model, contents=contents, config=config
            )
        except LLMUnavailable as exc:
            line["error"] = str(exc)
            await asyncio.to_thread(self._append, attempt, line)
            raise
        line["response"] = response.model_dump(mode="json", exclude_none=True)
        await asyncio.to_thread(self._append, attempt, line)
        return response

    def _append(self, attempt: str, line: dict[str, Any]) -> None:
        with (self.folder / f"{attempt}.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


class Replayer:
    """Serves the recorded answers; a call that was not recorded is ``LLMUnavailable``."""

    def __init__(self, folder: Path) -> None:
        if not folder.is_dir():
            raise FileNotFoundError(f"no recording folder {str(folder)!r}")
        self.folder = folder
        self.keys = _Keys()
        self.loaded: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}

    def forget(self, attempt: str) -> None:
        for key in [k for k in self.keys.counts if k[0] == attempt]:
            del self.keys.counts[key]

    def _calls(self, attempt: str) -> dict[tuple[str, int], dict[str, Any]]:
        if attempt not in self.loaded:
            path = self.folder / f"{attempt}.jsonl"
            lines = path.read_text("utf-8").splitlines() if path.is_file() else []
            entries = [json.loads(line) for line in lines if line.strip()]
            self.loaded[attempt] = {(e["stage"], e["n"]): e for e in entries}
        return self.loaded[attempt]

    async def generate_content(
        self, *, model: str, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> types.GenerateContentResponse:
        attempt, stage, n = self.keys.next(contents, config)
        entry = self._calls(attempt).get((stage, n))
        if entry is None:
            raise LLMUnavailable(f"the recording has no answer for {attempt} {stage} #{n}")
        if "error" in entry:
            raise LLMUnavailable(str(entry["error"]))
        return types.GenerateContentResponse.model_validate(entry["response"])
