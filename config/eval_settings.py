"""Settings of ``socbot eval`` (docs/eval.md): its optional LLM judge, on a model of its own,
and the team's own pack that disagreements are captured into."""

from __future__ import annotations

from pydantic import Field

from config.agent_settings import Section


class EvalSettings(Section):
    """The judge grades a conclusion against the ground truth with a rubric; its score
    is reported beside the deterministic gates and never replaces them."""

    judge_model: str = Field(
        "gemini-2.5-flash", description="the judge's model (socbot eval run --judge)"
    )
    judge_token_budget: int = Field(60_000, ge=1_000, description="tokens per judged attempt")
    judge_timeout_s: float = Field(120.0, gt=0, description="seconds per judged attempt")
    team_pack: str = Field(
        "",
        description="folder of the team's own pack: every case resolved against socbot's "
        "verdict is captured into it (socbot eval run --pack team); empty = no capture",
    )
