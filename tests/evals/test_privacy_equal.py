"""Issue 33: the eval pack's figures under pseudonymisation equal the figures without it,
against the scripted model (the mechanism loses nothing), while the model's requests
hold none of the scenarios' e-mail addresses. The scripted model writes each value as it
saw it (``copies``): under ``[privacy]`` its findings name pseudonyms, which must be
restored for the scorer to find the values."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from cli.eval.run import run_eval
from config.privacy_settings import PrivacySettings
from config.settings import Settings
from evals.report import scored
from evals.results import RunFolder
from evals.scenario import Scenario, load_pack
from store.eval_reports import RunMeta, Score
from tests.fakes.eval_model import Answer, as_seen, eval_model, lookups
from tests.fakes.model import ScriptedModel

KEY = SecretStr(base64.b64encode(bytes(range(32))).decode())


def with_emails() -> list[Scenario]:
    """The default pack's scenarios an answer must name an e-mail address in."""
    return [s for s in load_pack("org") if any("@" in v for v in s.truth.values)]


def run(tmp_path: Path, pack: list[Scenario], privacy: bool) -> tuple[list[Score], ScriptedModel]:
    name = "on" if privacy else "off"
    folder = RunFolder(tmp_path / name)
    folder.write_meta(RunMeta(pack="org", model="scripted", started="now"))
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / name}.db",
        privacy=PrivacySettings(enabled=privacy, key=KEY if privacy else None),
    )
    kinds = ("right", "flip", "missing", "severity")
    answers = {s.id: Answer(kinds[i % len(kinds)]) for i, s in enumerate(pack)}
    model = eval_model(pack, answers, copies=True)
    asyncio.run(run_eval(settings, [(s, 0) for s in pack], folder, backend=model, concurrency=2))
    return scored(pack, folder.attempts()), model


def sent(model: ScriptedModel) -> str:
    return "\n".join(
        r.system + json.dumps([c.model_dump(mode="json") for c in r.contents])
        for r in model.requests
    )


def test_figures_with_pseudonyms_equal_figures_without(tmp_path: Path) -> None:
    pack = with_emails()[:6]
    assert len(pack) == 6
    plain, plain_model = run(tmp_path, pack, privacy=False)
    hidden, hidden_model = run(tmp_path, pack, privacy=True)

    emails = {v for s in pack for v in s.truth.values if "@" in v}
    assert any(e in sent(plain_model) for e in emails)  # the model reads them without it
    leaked = [e for e in emails if e.lower() in sent(hidden_model).lower()]
    assert leaked == []
    assert "EMAIL_" in sent(hidden_model)
    written = {  # each lookup's literal as the model saw it (and wrote it in findings)
        as_seen(request, f"s1#{n}")
        for request in hidden_model.requests_for("concluder")
        for n in range(2, 2 + max(len(lookups(s)) for s in pack))
    } - {None}
    assert not written & emails and any(str(w).startswith("EMAIL_") for w in written), written

    def figures(scores: list[Score]) -> list[dict[str, Any]]:
        keep = ("id", "passed", "gates", "given_verdict", "recall", "missing", "verified_share")
        return [s.model_dump(include=set(keep)) for s in sorted(scores, key=lambda s: s.id)]

    assert figures(hidden) == figures(plain)
    assert sum(s.passed for s in plain) >= 2  # the right answers pass: equality means something
