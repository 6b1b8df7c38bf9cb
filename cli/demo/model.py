"""The demo's model: plays ``cli.demo.script`` as google-genai responses, no network.

It implements ``agent.model.llm.ModelBackend`` like ``GeminiBackend``, so the gateway,
engine and review run unchanged. Each call is routed on the stage it names
(``agent.prompts.stage_named``); a step answers by how many model turns its contents
already hold. Token counts are estimates (characters / 4) so the engine's budgets work;
the demo's model has no price, so no cost is shown or recorded as one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from google.genai import types

from agent.prompts import stage_named
from cli.demo import script

MODEL = "socbot-demo-script"
NOT_SCRIPTED = (
    "This is socbot's demo: its scripted model only knows the bundled sample alert. "
    "Run socbot with a Gemini key to ask anything else."
)
CHARS_PER_TOKEN = 4


class DemoModel:
    """A ``ModelBackend`` that answers every stage from the demo script."""

    def __init__(self) -> None:
        self.calls = 0

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
    ) -> types.GenerateContentResponse:
        self.calls += 1
        stage = stage_named(_system_text(config), _text(contents[:1]))
        answer = _ANSWERS.get(stage.split(" ", 1)[0], _not_scripted)
        parts = answer(stage, sum(1 for c in contents if c.role == "model"))
        prompt_chars = len(_system_text(config)) + len(_text(contents))
        return _response(parts, prompt_chars)


def _json(obj: Any) -> Callable[[str, int], list[types.Part]]:
    return lambda _stage, _turns: [types.Part(text=json.dumps(obj))]


def _step(stage: str, turns: int) -> list[types.Part]:
    step = script.STEPS.get(stage.split(" ", 1)[-1])
    if step is None:
        return _not_scripted(stage, turns)
    if turns >= len(step.turns):
        return [types.Part(text=step.findings)]
    return [
        types.Part(function_call=types.FunctionCall(name=name, args=dict(args)))
        for name, args in step.turns[turns]
    ]


def _not_scripted(_stage: str, _turns: int) -> list[types.Part]:
    return [types.Part(text=NOT_SCRIPTED)]


_ANSWERS: dict[str, Callable[[str, int], list[types.Part]]] = {
    "classifier": _json(script.CLASSIFICATION),
    "planner": _json(script.plan_json()),
    "step": _step,
    "reflector": _json(script.REFLECTION),
    "concluder": _json(script.CONCLUSION),
    "critic": _json(script.CRITIQUE),
}


def _response(parts: list[types.Part], prompt_chars: int) -> types.GenerateContentResponse:
    output_chars = sum(len(p.text or "") for p in parts) + sum(
        len(json.dumps(p.function_call.args or {})) for p in parts if p.function_call
    )
    prompt, output = prompt_chars // CHARS_PER_TOKEN, max(1, output_chars // CHARS_PER_TOKEN)
    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=parts),
                finish_reason=types.FinishReason.STOP,
                index=0,
            )
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt,
            candidates_token_count=output,
            total_token_count=prompt + output,
        ),
        model_version=MODEL,
    )


def _system_text(config: types.GenerateContentConfig) -> str:
    si = config.system_instruction
    if isinstance(si, str):
        return si
    if isinstance(si, types.Content):
        return "".join(p.text or "" for p in si.parts or [])
    return ""


def _text(contents: list[types.Content]) -> str:
    return "".join(p.text or "" for c in contents for p in c.parts or [])
