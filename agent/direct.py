"""Direct mode: one tool loop over every enabled tool, answering a question in text.

The loop may use ``limits.max_direct_tool_calls`` calls (then a forced summary) and
the whole deadline and token budget (``run.final``). The question and its answer are
appended to the conversation's history.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from agent.events import Answered
from agent.executor import tool_loop
from agent.prompts import user_turn
from agent.run import Outcome, Run, failed, outcome

if TYPE_CHECKING:
    from agent.engine import Engine

NO_ANSWER = "I could not produce an answer."


async def answer(engine: Engine, run: Run) -> Outcome:
    """Answer ``run.request`` with the direct tool loop; emits ``Answered``."""
    tools = engine.registry.names()
    max_calls = engine.limits.max_direct_tool_calls
    prompt = engine.prompts.render(
        "direct",
        tool_catalogue=engine.registry.catalogue_text(tools),
        max_calls=max_calls,
        **run.variables,
    )
    try:
        async with asyncio.timeout(max(run.final.deadline - time.monotonic(), 0.0)):
            result = await tool_loop(
                engine.gateway,
                run.final,
                run.runner,
                stage="direct",
                system=prompt.system,
                contents=user_turn(prompt.user),
                tools=tools,
                max_calls=max_calls,
            )
    except TimeoutError:
        run.limits_hit.append("deadline: the deadline passed before an answer was ready")
        return await failed(run, "The deadline passed before an answer was ready.")
    if result.forced_summary:
        run.limits_hit.append(f"max_direct_tool_calls: all {max_calls} tool calls used")
    text = result.text or NO_ANSWER
    await engine.history.append(run.request.conversation_id, run.request.text, text, run.id)
    await run.sink.emit(Answered(investigation_id=run.id, text=text))
    return outcome(run, "answered", answer=text)
