"""The request and the answer of one model call, pseudonymised and restored.

``outgoing`` copies a call's contents and config with every text the model reads
pseudonymised: the system instruction, text parts (thoughts too), the arguments of
function calls echoed back, function responses (tool results, at any depth) and the
function declarations' descriptions. ``incoming`` copies the answer with the real values
back in its text, its function calls' arguments and, for a JSON answer, each JSON
string (a real value may hold a quote). Nothing else of a call is touched: ids, names,
thought signatures, the schema of a structured answer.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from agent.model.privacy.mapper import Pseudonymiser


def outgoing(
    p: Pseudonymiser, contents: list[types.Content], config: types.GenerateContentConfig
) -> tuple[list[types.Content], types.GenerateContentConfig]:
    """The call as the model may see it."""
    update: dict[str, Any] = {}
    system = config.system_instruction
    if isinstance(system, str):
        update["system_instruction"] = p.pseudonymise(system)
    elif isinstance(system, types.Content):
        update["system_instruction"] = _content(p, system)
    elif system is not None:
        raise TypeError("a system instruction socbot does not build: it is not pseudonymised")
    if config.tools:
        update["tools"] = [_tool(p, tool) for tool in config.tools]
    return [_content(p, c) for c in contents], config.model_copy(update=update)


def incoming(
    p: Pseudonymiser,
    response: types.GenerateContentResponse,
    config: types.GenerateContentConfig,
) -> types.GenerateContentResponse:
    """The answer with this conversation's pseudonyms turned back into real values."""
    structured = config.response_mime_type == "application/json"
    candidates = []
    for candidate in response.candidates or []:
        content = candidate.content
        if content is not None and content.parts:
            parts = [_restored(p, part, structured) for part in _joined(content.parts)]
            content = content.model_copy(update={"parts": parts})
        candidates.append(candidate.model_copy(update={"content": content}))
    if response.candidates is None:
        return response
    return response.model_copy(update={"candidates": candidates})


def _content(p: Pseudonymiser, content: types.Content) -> types.Content:
    parts = [_part(p, part) for part in content.parts or []]
    return content.model_copy(update={"parts": parts})


def _part(p: Pseudonymiser, part: types.Part) -> types.Part:
    update: dict[str, Any] = {}
    if part.text is not None:
        update["text"] = p.pseudonymise(part.text)
    if part.function_call is not None:
        args = _value(p, part.function_call.args)
        update["function_call"] = part.function_call.model_copy(update={"args": args})
    if part.function_response is not None:
        response = _value(p, part.function_response.response)
        update["function_response"] = part.function_response.model_copy(
            update={"response": response}
        )
    if part.inline_data is not None or part.file_data is not None:
        raise TypeError("a file part socbot does not send: it cannot be pseudonymised")
    return part.model_copy(update=update) if update else part


def _value(p: Pseudonymiser, value: Any) -> Any:
    if isinstance(value, str):
        return p.pseudonymise(value)
    if isinstance(value, dict):
        return {p.pseudonymise(str(k)): _value(p, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(p, v) for v in value]
    return value


def _tool(p: Pseudonymiser, tool: Any) -> Any:
    if not isinstance(tool, types.Tool) or not tool.function_declarations:
        return tool
    declarations = [
        d.model_copy(update={"description": p.pseudonymise(d.description or "")})
        if d.description
        else d
        for d in tool.function_declarations
    ]
    return tool.model_copy(update={"function_declarations": declarations})


def _joined(parts: list[types.Part]) -> list[types.Part]:
    """Adjacent answer text parts as one (a pseudonym split across them is restored);
    a part with a thought signature of its own starts a new one."""
    out: list[types.Part] = []
    for part in parts:
        last = out[-1] if out else None
        if (
            last is not None
            and part.text is not None
            and last.text is not None
            and not part.thought_signature
            and bool(part.thought) == bool(last.thought)
            and last.function_call is None
        ):
            out[-1] = last.model_copy(update={"text": last.text + part.text})
        else:
            out.append(part)
    return out


def _restored(p: Pseudonymiser, part: types.Part, structured: bool) -> types.Part:
    update: dict[str, Any] = {}
    if part.text is not None:
        json_text = structured and not part.thought
        update["text"] = p.restore_json(part.text) if json_text else p.restore(part.text)
    if part.function_call is not None and part.function_call.args is not None:
        args = p.restore_value(part.function_call.args)
        update["function_call"] = part.function_call.model_copy(update={"args": args})
    return part.model_copy(update=update) if update else part
