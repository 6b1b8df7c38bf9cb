"""The deploy recipes (``Dockerfile``, ``compose.yaml``, ``deploy/``) checked the way these
machines can: no container runtime can build an image here (no daemon, no registry), so
the Kubernetes manifests are validated against the Kubernetes schemas
(``kubernetes-validate``, strict), the systemd unit with ``systemd-analyze verify``, and
the Dockerfile's install steps run in a clean virtualenv, then ``socbot demo`` from it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from config.settings import WorkSettings

ROOT = Path(__file__).resolve().parents[1]
KUBERNETES = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
GRACE_S = WorkSettings().shutdown_grace_s


def resources() -> list[dict[str, Any]]:
    return [doc for path in KUBERNETES for doc in yaml.safe_load_all(path.read_text()) if doc]


def kind(name: str) -> dict[str, Any]:
    [found] = [r for r in resources() if r["kind"] == name]
    return found


@pytest.mark.parametrize(
    "resource", resources(), ids=lambda r: f"{r['kind']}/{r['metadata']['name']}"
)
def test_kubernetes_manifests_are_valid(resource: dict[str, Any]) -> None:
    kubernetes_validate.validate(resource, "1.37.0", strict=True)


def test_deployment_probes_secrets_and_grace() -> None:
    pod = kind("Deployment")["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["envFrom"] == [{"secretRef": {"name": "socbot"}}]
    env = {e["name"]: e.get("value") for e in container["env"]}
    grace = float(env["SOCBOT_WORK__SHUTDOWN_GRACE_S"])
    assert grace == GRACE_S
    assert grace < pod["terminationGracePeriodSeconds"] <= grace + 15  # grace, then hand-over
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert kind("PodDisruptionBudget")["spec"]["minAvailable"] == 1
    job = kind("Job")["spec"]["template"]["spec"]["containers"][0]
    assert job["args"][:2] == ["db", "upgrade"] and job["envFrom"] == container["envFrom"]
    assert all(v == "replace-me" or "replace-me" in v or v.startswith(("[", "C0"))
               for v in kind("Secret")["stringData"].values())  # fmt: skip


def test_compose_postgres_migrations_and_two_replicas() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert services["postgres"]["healthcheck"]
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    socbot = services["socbot"]
    assert socbot["deploy"]["replicas"] == 2
    assert socbot["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert socbot["env_file"] == ["socbot.env"] and "environment" not in socbot
    assert int(socbot["stop_grace_period"].rstrip("s")) > GRACE_S
    ignored = (ROOT / ".gitignore").read_text().split()
    assert {"socbot.env", "postgres.env"} <= set(ignored)


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def test_dockerfile_is_multi_stage_non_root_compiled_and_healthchecked() -> None:
    text = dockerfile()
    assert len(re.findall(r"^FROM ", text, flags=re.M)) == 2
    assert re.search(r"^USER socbot$", text, flags=re.M)
    assert re.search(r"^HEALTHCHECK .*/healthz", text, flags=re.M | re.S)
    assert "--compile-bytecode" in text and "compileall" in text
    secretish = re.compile(r"^(ENV|ARG)\b.*(KEY|TOKEN|SECRET|PASSWORD)", flags=re.M)
    assert not secretish.search(text), "a secret in an image layer"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".env", "*.env", "config/*.local.toml", "var", ".venv"} <= set(ignored)


def test_systemd_unit_verifies_and_outwaits_the_grace(tmp_path: Path) -> None:
    unit = (ROOT / "deploy" / "systemd" / "socbot.service").read_text()
    stop = re.search(r"^TimeoutStopSec=(\d+)$", unit, flags=re.M)
    assert stop is not None and int(stop.group(1)) > GRACE_S
    venv = Path(sys.executable).parent.parent
    local = unit.replace("/opt/socbot/.venv", str(venv)).replace("/opt/socbot", str(ROOT))
    local = local.replace("/etc/socbot/socbot.env", str(ROOT / "deploy" / "socbot.env.example"))
    path = tmp_path / "socbot.service"
    path.write_text(local)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_the_dockerfiles_install_steps_give_a_working_socbot(tmp_path: Path) -> None:
    """Each ``uv sync`` of the Dockerfile, as written, into a clean virtualenv (from uv's
    cache: ``--offline``), then the Dockerfile's ``compileall``, then ``socbot demo``."""
    found = shutil.which("uv")
    uv = [found] if found else ["python3", "-m", "uv"]  # as .ci/run runs it without one
    venv = tmp_path / "venv"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("VIRTUAL_ENV", None)
    steps = re.findall(r"uv sync [^\n\\&]+", dockerfile())
    assert len(steps) == 2
    for step in steps:
        args = shlex.split(step)[1:]
        done = subprocess.run(
            [*uv, *args, "--offline", "--python", sys.executable],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    assert not (venv / "bin" / "pytest").exists()  # --no-dev
    assert list(venv.glob("lib/python*/site-packages/asyncpg"))  # --extra postgres
    packages = re.search(r"compileall -q ([a-z ]+)", dockerfile())
    assert packages is not None
    compiled = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "compileall", "-q", *packages.group(1).split()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert compiled.returncode == 0, compiled.stdout
    demo = subprocess.run(
        [str(venv / "bin" / "socbot"), "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert demo.returncode == 0, demo.stderr
    assert "True positive" in demo.stdout
