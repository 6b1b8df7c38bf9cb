"""``socbot eval`` on an ``openai:`` model: the pack through the engine, the real openai
SDK client on the Chat Completions fake (``tests/fakes/openai_eval.py``); the run
recorded and replayed with ``socbot eval run --model openai:…``; ``eval compare`` of it
against a Gemini run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import respx
from typer.testing import CliRunner

from agent.model.providers import RoutingBackend
from cli.eval.run import run_eval
from cli.main import app
from config.settings import Settings
from evals.results import RunFolder
from evals.scenario import load_pack
from store.eval_reports import RunMeta
from tests.fakes import openai_api as oa
from tests.fakes.eval_model import Answer, eval_model
from tests.fakes.openai_eval import eval_script

ONLY = "okta-password-spray,edr-defender*"
MODEL = "openai:gpt-5-mini"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_pack_on_openai_replayed_by_model_name_and_compared_with_gemini(env: Path) -> None:
    pack = load_pack("core", ONLY)
    work = [(s, 0) for s in pack]
    right = {s.id: Answer("right") for s in pack}
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{env / 'live.db'}",
        models={"main": MODEL, "light": "openai:gpt-5-nano"},
    )
    api = oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), eval_script(pack, right))
    backend = RoutingBackend(
        settings, factories={"openai": lambda: oa.openai_backend(api, settings)}
    )
    live = RunFolder(env / "live")
    live.write_meta(RunMeta(pack="core", model=MODEL, started="now"))
    asyncio.run(run_eval(settings, work, live, backend=backend, record=env / "rec"))
    assert {b["model"] for b in api.requests} == {"gpt-5-mini", "gpt-5-nano"}
    attempts = live.attempts()
    assert len(attempts) == len(pack) and all(a.cost_usd > 0 for a in attempts)

    # socbot eval run --model openai:…, answered from the recording: no key, no network
    runner = CliRunner()
    args = [
        "eval",
        "run",
        "--pack",
        "core",
        "--only",
        ONLY,
        "--model",
        MODEL,
        "--replay",
        str(env / "rec"),
    ]
    replayed = runner.invoke(app, [*args, "--json"])
    assert replayed.exit_code == 0, replayed.output
    report = json.loads(replayed.stdout)
    assert report["summary"]["verdict_accuracy"] == 1.0
    assert (env / "var" / "eval" / "core-openai-gpt-5-mini" / "report.json").is_file()

    gemini = RunFolder(env / "gemini")
    gemini.write_meta(RunMeta(pack="core", model="gemini-2.5-flash", started="now"))
    flipped = {s.id: Answer("flip") for s in pack}
    plain = Settings(database_url=f"sqlite+aiosqlite:///{env / 'g.db'}")
    asyncio.run(run_eval(plain, work, gemini, backend=eval_model(pack, flipped)))
    compared = runner.invoke(app, ["eval", "compare", str(live.path), str(gemini.path), "--json"])
    assert compared.exit_code == 1, compared.output  # the Gemini run got every verdict wrong
    assert json.loads(compared.stdout)["accuracy_diff"] == -1.0


def test_an_unknown_provider_on_the_command_line_is_one_line(env: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "run", "--pack", "core", "--only", ONLY, "--model", "opnai:gpt-5"]
    )
    assert result.exit_code == 2 and "known providers" in result.output


def test_a_local_model_without_a_price_reports_cost_unknown(env: Path) -> None:
    from cli.eval.view import _cost
    from evals.report import report
    from evals.runner import estimate_cost

    pack = load_pack("core", "okta-password-spray")
    base = "http://127.0.0.1:11434/v1"
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{env / 'local.db'}",
        models={"main": "openai:qwen3:32b", "light": "openai:qwen3:32b"},
        openai={"base_url": base, "strict_schemas": False},
    )
    script = eval_script(pack, {s.id: Answer("right") for s in pack})
    api = oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), script, base_url=base)
    backend = RoutingBackend(
        settings, factories={"openai": lambda: oa.openai_backend(api, settings)}
    )
    folder = RunFolder(env / "local")
    asyncio.run(run_eval(settings, [(pack[0], 0)], folder, backend=backend))
    [attempt] = folder.attempts()
    assert attempt.calls > 0 and attempt.unpriced_calls == attempt.calls
    assert estimate_cost(settings, 10, [attempt]) is None  # unknown, not $0
    summary = report(pack, [attempt], None)["summary"]
    assert _cost(summary) == "unknown (no price for the model)"
