"""Direct mode: one tool loop over every enabled tool, answering a question in text.

The loop may use ``limits.max_direct_tool_calls`` calls (then a forced summary) and
the deadline and token budget up to the review's share (``run.final``). An answer
built on tool results is then reviewed (seed 003's sufficiency check): code checks
that the values it quotes appear in this answer's tool results, the request or the
conversation, a critic scores it, and it is revised at most once, without tools,
when it falls short. Answers without tool facts are not reviewed. The question and
the final answer are appended to the conversation's history.
"""

from __future__ import annotations

import asyncio
import time

from agent.executor import tool_loop
from agent.kit import Kit
from agent.model.fence import user_turn
from agent.prompts import Rendered
from agent.review.critic import Feedback, Review, Subject
from agent.review.grounding import CodeCheck, FindingCheck, check_text
from agent.run import Outcome, Run, failed, outcome
from core.events import Answered, Reviewed
from store.schema import InvestigationStatus

NO_ANSWER = "I could not produce an answer."


async def answer(kit: Kit, run: Run) -> Outcome:
    """Answer ``run.request`` with the direct tool loop; emits ``Answered``."""
    tools = kit.registry.names()
    max_calls = kit.limits.max_direct_tool_calls
    prompt = kit.prompts.render(
        "direct",
        tool_catalogue=kit.registry.catalogue_text(tools),
        max_calls=max_calls,
        feedback=None,
        **run.variables,
    )
    try:
        async with asyncio.timeout(max(run.final.deadline - time.monotonic(), 0.0)):
            result = await tool_loop(
                kit.gateway,
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
    if result.text:
        text = await _review(kit, run, text, tools)
    await kit.history.append(run.request.conversation_id, run.request.text, text, run.id)
    await run.sink.emit(Answered(investigation_id=run.id, text=text))
    return outcome(run, InvestigationStatus.ANSWERED, answer=text)


REVISION_STAGE = "direct_revision"


async def _review(kit: Kit, run: Run, text: str, tools: list[str]) -> str:
    """The answer, or its one revision when the review finds it falls short."""
    evidence = run.runner.evidence
    skip = kit.reviewer.skip_reason("direct", [])
    if skip is None and not evidence.any_succeeded:
        skip = "the answer states no tool facts"
    if skip is not None:
        run.review = Review(status="skipped", kind="answer", note=skip)
        return text
    started = time.monotonic()
    known = "\n".join(
        [run.request.text, run.variables.get("history") or "", evidence.succeeded_text()]
    )

    def check(answer: str) -> CodeCheck:
        problems = check_text(answer, known)
        return CodeCheck(findings=[FindingCheck(index=0, verified=not problems, problems=problems)])

    async def revise(feedback: Feedback) -> str:
        prompt = kit.prompts.render(
            "direct",
            tool_catalogue=kit.registry.catalogue_text(tools),
            max_calls=0,
            feedback={
                "draft": feedback.draft,
                "issues": feedback.issues,
                "evidence": "\n\n".join(
                    f"{i.line()}\n{i.result}" for i in evidence.items.values() if i.ok
                ),
            },
            **run.variables,
        )
        return await _revision(kit, run, prompt)

    subject = Subject[str](
        kind="answer",
        check=check,
        show=lambda answer: answer,
        rewrite=revise,
        variables={
            **run.manual_variables(),
            "objective": run.request.text,
            "steps": [],
            "evidence_index": evidence.index(),
        },
        max_rewrites=min(kit.settings.review.max_rewrites, 1),
        score_rewrites=False,
    )
    text, run.review = await kit.reviewer.review(run.review_ctx, text, subject)
    run.record["timings"]["review_ms"] = round((time.monotonic() - started) * 1000, 1)
    await run.sink.emit(
        Reviewed(investigation_id=run.id, kind="answer", review=run.review.model_dump())
    )
    return text


async def _revision(kit: Kit, run: Run, prompt: Rendered) -> str:
    turn = await kit.gateway.generate(
        run.review_ctx, stage=REVISION_STAGE, system=prompt.system, contents=user_turn(prompt.user)
    )
    return turn.text.strip() or NO_ANSWER
