# socbot container image: `socbot serve` (Slack bot, POST /alerts, GET /healthz).
# Build:  docker build -t socbot .
# Try:    docker run --rm socbot demo          (no key, no network)
# Run:    docker run --env-file socbot.env -p 3000:3000 socbot
# Secrets come from the environment at run time (--env-file, Kubernetes Secrets):
# none is copied into a layer (see .dockerignore). docs/deploy.md has the details.

# ---- build: dependencies and socbot, bytecode compiled ------------------------------
FROM python:3.11-slim-bookworm AS build
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /usr/local/bin/uv
ENV UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
# The locked dependencies first (a layer that changes only with uv.lock), then socbot.
COPY pyproject.toml uv.lock README.md LICENSE ./
RUN uv sync --frozen --no-dev --extra postgres --compile-bytecode --no-install-project
COPY agent agent
COPY alerts alerts
COPY bot bot
COPY cli cli
COPY config config
COPY core core
COPY prompts prompts
COPY store store
COPY tools tools
COPY examples examples
COPY slack-app-manifest.yaml ./
RUN uv sync --frozen --no-dev --extra postgres --compile-bytecode \
 && /app/.venv/bin/python -m compileall -q agent alerts bot cli config core store tools

# ---- runtime: the virtualenv and the sources, as a user without privileges -----------
FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin socbot
WORKDIR /app
COPY --from=build --chown=root:root /app /app
RUN mkdir -p /app/var && chown socbot:socbot /app/var
ENV PATH=/app/.venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    SOCBOT_CONFIG=/app/config/socbot.toml
USER socbot
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=4)"]
# SIGTERM lets running work finish for work.shutdown_grace_s (20 s), then hands it on:
# stop the container with a longer timeout (docker stop -t 30, compose stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["socbot"]
CMD ["serve", "--mode", "http", "--host", "0.0.0.0", "--port", "3000"]
