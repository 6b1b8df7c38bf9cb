"""``socbot eval``: list the scenario pack, run it on the engine, report, compare, capture.

A run writes its attempts to a folder (``--out``, default ``var/eval/<pack>-<model>``)
as they end; running again continues an interrupted run (``--fresh`` starts over).
``--json`` prints the report (``summary`` and ``results``, docs/eval.md) on stdout;
progress and the summary tables go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent.errors import AgentError
from cli.common import ModelOpt, command_app, fail, load_settings_or_exit, one_line, with_model
from cli.eval.capture import capture_cmd, team_folder
from cli.eval.run import run_eval
from cli.eval.view import pack_rows, pack_table, print_comparison, print_summary
from config.settings import ConfigError, Settings
from evals.report import report
from evals.results import BASELINE, Attempt, RunFolder
from evals.runner import Stop, estimate_cost
from evals.scenario import DEFAULT_PACK, Scenario, ScenarioError, load_pack, pack_folder
from store.eval_reports import RunMeta, write_report

app = command_app(help="Measure verdict quality on a scenario pack.")
eval_app = command_app(help="Measure verdict quality on a scenario pack.")
app.add_typer(eval_app, name="eval")

PackOpt = Annotated[
    str | None,
    typer.Option(
        "--pack", help="Bundled pack name (default org), team (evals.team_pack), a folder."
    ),
]
OnlyOpt = Annotated[
    str | None, typer.Option("--only", help="Scenario ids matching these patterns (a,b*).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]


def _pack(pack: str | None, only: str | None = None) -> list[Scenario]:
    try:
        return load_pack(team_folder(pack), only)
    except ScenarioError as exc:
        raise fail(str(exc)) from None


@eval_app.command("list")
def list_pack(pack: PackOpt = None, only: OnlyOpt = None, as_json: JsonOpt = False) -> None:
    """Show the pack: each scenario's id, category, expected verdict and origin."""
    scenarios = _pack(pack, only)
    if as_json:
        typer.echo(json.dumps(pack_rows(scenarios), indent=2))
    else:
        Console(soft_wrap=False).print(pack_table(scenarios))


@eval_app.command("run")
def run(
    pack: PackOpt = None,
    only: OnlyOpt = None,
    repeat: Annotated[int, typer.Option(min=1, help="Attempts per scenario.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Scenarios at once.")] = 2,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Stop once this many USD are spent.")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder (resumed if it exists).")] = None,
    fresh: Annotated[bool, typer.Option(help="Discard the folder's earlier attempts.")] = False,
    record: Annotated[
        Path | None, typer.Option(help="Keep every model request's answer in this folder.")
    ] = None,
    replay: Annotated[
        Path | None, typer.Option(help="Answer from a --record folder: no key, no network.")
    ] = None,
    html: Annotated[Path | None, typer.Option(help="Also write the HTML report here.")] = None,
    model: ModelOpt = None,
    judge: Annotated[
        bool,
        typer.Option(help="Also grade each conclusion with the LLM judge (evals.judge_model)."),
    ] = False,
    alert_only: Annotated[
        bool,
        typer.Option("--alert-only", help="Also run the baseline: the same model, no tools."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the pack on the engine (review and playbook as configured) and score it."""
    settings = with_model(load_settings_or_exit(announce=False), model)
    scenarios = _pack(pack, only)
    name = pack or DEFAULT_PACK
    folder = RunFolder(
        out or Path("var/eval") / f"{_slug(name)}-{_slug_model(settings.models.main)}"
    )
    earlier = _prepare(folder, name, settings, fresh)
    done = {(a.scenario, a.repeat) for a in earlier}
    work = [(s, r) for r in range(repeat) for s in scenarios if (s.id, r) not in done]
    err = Console(stderr=True)
    _announce(err, settings, folder, work, earlier, max_cost, replay is not None)
    stop = None
    options = {"concurrency": concurrency, "max_cost": max_cost, "judge": judge}
    if work:
        stop = _run_with_progress(err, settings, work, folder, record, replay, options)
    base = folder.baseline()
    wanted = {(s.id, r) for s in scenarios for r in range(repeat)}
    if alert_only and not (stop and stop.reason):
        stop = _baseline(err, settings, scenarios, repeat, base, record, replay, options) or stop
    attempts = [a for a in folder.attempts() if (a.scenario, a.repeat) in wanted]
    plain = [a for a in base.attempts() if (a.scenario, a.repeat) in wanted]
    meta = folder.meta()
    result = report(scenarios, attempts, meta.model_dump() if meta else None, plain)
    write_report(folder.path, result)  # what the web pages show (store/eval_reports.py)
    print_summary(err, result)
    if html is not None:
        from evals.report_html import write_html

        write_html(html, result)
        err.print(f"HTML report: {html}", highlight=False)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    if stop is not None and stop.reason:
        err.print(f"stopped: {stop.reason}; run again to continue", style="yellow")
        raise typer.Exit(3)


def _baseline(
    err: Console,
    settings: Settings,
    scenarios: list[Scenario],
    repeat: int,
    base: RunFolder,
    record: Path | None,
    replay: Path | None,
    options: dict[str, Any],
) -> Stop | None:
    """The alert-only attempts still missing, run (recorded apart: ``DIR/alert_only``)."""
    done = base.done()
    work = [(s, r) for r in range(repeat) for s in scenarios if (s.id, r) not in done]
    if not work:
        return None
    err.print(f"alert-only baseline: {len(work)} attempts, no tools", highlight=False)
    apart = [p / BASELINE if p else None for p in (record, replay)]  # keys are per attempt
    options = {**options, "judge": False, "alert_only": True}
    return _run_with_progress(err, settings, work, base, apart[0], apart[1], options)


def _slug(name: str) -> str:
    return Path(name).name or "pack"


def _slug_model(model: str) -> str:
    """A model name as a folder name (``openai:meta/llama-3`` → ``openai-meta-llama-3``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model)


def run_settings(settings: Settings) -> dict[str, Any]:
    """The settings a run's figures depend on (kept in ``run.json``, compared on resume)."""
    return {
        "light_model": settings.models.light,
        "review": settings.review.enabled,
        "playbook": settings.playbook.enabled,
        "max_steps": settings.limits.max_steps,
    }


def _prepare(folder: RunFolder, pack: str, settings: Settings, fresh: bool) -> list[Attempt]:
    meta = folder.meta()
    current = RunMeta(
        pack=pack,
        model=settings.models.main,
        started=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=run_settings(settings),
    )
    if fresh:
        folder.clear()
    elif meta is not None and (meta.pack, meta.model, meta.settings) != (
        current.pack,
        current.model,
        current.settings,
    ):
        raise fail(
            f"{str(folder.path)!r} holds a run of pack {meta.pack!r} on {meta.model!r} with "
            f"{meta.settings}; use --fresh or another --out"
        )
    if fresh or meta is None:
        folder.write_meta(current)
    return folder.attempts()


def _announce(
    err: Console,
    settings: Settings,
    folder: RunFolder,
    work: list[tuple[Scenario, int]],
    earlier: list[Attempt],
    max_cost: float | None,
    replaying: bool,
) -> None:
    if earlier:
        err.print(f"resuming {folder.path}: {len(earlier)} attempts done", highlight=False)
    estimate = 0.0 if replaying else estimate_cost(settings, len(work), earlier)
    cost = "unknown (no price for the model)" if estimate is None else f"~${estimate:.2f}"
    err.print(f"{len(work)} attempts to run on {settings.models.main}; estimated cost {cost}")
    if max_cost is not None and estimate is not None and estimate > max_cost:
        err.print(f"the estimate is above --max-cost ${max_cost:g}: the run will stop there")


def _run_with_progress(
    err: Console,
    settings: Settings,
    work: list[tuple[Scenario, int]],
    folder: RunFolder,
    record: Path | None,
    replay: Path | None,
    options: dict[str, Any],
) -> Stop:
    columns = (TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("eval", total=len(work))
        try:
            return asyncio.run(
                run_eval(
                    settings,
                    work,
                    folder,
                    record=record,
                    replay=replay,
                    on_done=lambda _a: progress.advance(bar),
                    **options,
                )
            )
        except KeyboardInterrupt:
            raise fail("interrupted; run the same command again to continue", 130) from None
        except (ConfigError, AgentError, OSError) as exc:
            raise fail(one_line(exc)) from None


@eval_app.command("report")
def report_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (socbot eval run --out).")],
    html: Annotated[Path | None, typer.Option(help="Write the HTML report here.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Score a run folder again (after a scorer or pack change) and report it."""
    result = load_report(run_dir)
    write_report(run_dir, result)
    print_summary(Console(stderr=True), result)
    if html is not None:
        from evals.report_html import write_html

        write_html(html, result)
    if as_json:
        typer.echo(json.dumps(result, indent=2))


def load_report(run_dir: Path) -> dict[str, Any]:
    """A run folder's report, scored against its pack as it is now."""
    folder = RunFolder(run_dir)
    meta = folder.meta()
    if meta is None:
        raise fail(f"{str(run_dir)!r} is not a run folder (no run.json)")
    try:
        pack_folder(team_folder(meta.pack))
    except ScenarioError as exc:
        raise fail(str(exc)) from None
    plain = folder.baseline().attempts()
    return report(_pack(meta.pack), folder.attempts(), meta.model_dump(), plain)


@eval_app.command("compare")
def compare_cmd(
    run_a: Annotated[Path, typer.Argument(help="The baseline run folder.")],
    run_b: Annotated[Path, typer.Argument(help="The run folder to judge against it.")],
    as_json: JsonOpt = False,
) -> None:
    """Compare two runs scenario by scenario; exit 1 when B is clearly worse."""
    from evals.compare import compare

    judged = load_report(run_b)
    result = compare(load_report(run_a), judged)
    write_report(run_b, {**judged, "baseline": result})  # B's report shows its baseline
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        print_comparison(Console(), result)
    if result["worse"]:
        raise typer.Exit(1)


eval_app.command("capture")(capture_cmd)
