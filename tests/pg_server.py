"""A PostgreSQL server for the tests: ``HY_TEST_PG_URL``, else a throwaway local one.

``.ci/run`` starts a server and exports ``HY_TEST_PG_URL`` (and ``HY_TEST_REQUIRE_PG=1``).
Without the variable, the first test that needs PostgreSQL starts a private cluster
from the server binaries (``/usr/lib/postgresql/*/bin`` or ``PATH``) in a temp dir on a
loopback port, as the ``postgres`` user when running as root, and stops it at the end
of the session. When no server can be had, the PostgreSQL tests skip — or fail when
``HY_TEST_REQUIRE_PG=1``.

Each test gets fresh databases (:class:`PgDatabases`), dropped at teardown. A test that
freezes a server (:meth:`PgServer.freeze`) starts its own with :func:`start_private_server`:
the shared one serves other tests and other people.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import sqlalchemy as sa

__all__ = ["PgServer", "PgDatabases", "PgSchemas", "start_private_server", "start_server"]


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """A running server: its admin URL and how to stop it (``None`` when external)."""

    def __init__(self, url: str, stop_dir: Path | None = None, as_user: list[str] | None = None) -> None:
        self.url = url
        self._dir = stop_dir
        self._as_user = as_user or []

    def database_url(self, name: str) -> str:
        return str(sa.make_url(self.url).set(database=name).render_as_string(hide_password=False))

    def processes(self) -> list[int]:
        """The server's process ids, postmaster first (a server this process started)."""
        if self._dir is None:
            raise RuntimeError("only a private server's processes are known (start_private_server)")
        postmaster = int((self._dir / "data" / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended meanwhile
                continue
            if int(fields[1]) == postmaster:
                children.append(int(Path(stat).parent.name))
        return [postmaster, *children]

    def freeze(self) -> None:
        """Stop every process of the server (SIGSTOP): it accepts nothing and answers nothing.
        The postmaster goes first, so no new process starts meanwhile."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let the server's processes run again (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:  # a backend that ended since it was listed
                continue

    def stop(self) -> None:
        if self._dir is None:
            return
        bindir = _binaries()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        subprocess.run([*self._as_user, str(bindir / "pg_ctl"), "-D", str(self._dir / "data"),
                        "-m", "immediate", "stop"], capture_output=True, check=False, env=env)
        shutil.rmtree(self._dir, ignore_errors=True)


def start_server() -> PgServer:
    """The server of ``HY_TEST_PG_URL``, else a new local cluster (``RuntimeError`` if impossible)."""
    url = os.environ.get("HY_TEST_PG_URL", "").strip()
    if url:
        return PgServer(url)
    return start_private_server()


def start_private_server() -> PgServer:
    """A new local cluster of this test session's own (``RuntimeError`` if impossible)."""
    bindir = _binaries()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (install the Debian 'postgresql' package)")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    base = Path(tempfile.mkdtemp(prefix="hy-pg-"))
    if as_user:
        shutil.chown(base, "postgres")
    port = _free_port()
    steps = [
        [str(bindir / "initdb"), "-D", str(base / "data"), "-A", "trust", "-U", "postgres",
         "--no-sync"],
        [str(bindir / "pg_ctl"), "-D", str(base / "data"), "-l", str(base / "log"), "-w",
         "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off "
               "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
         "start"],
    ]
    # The server outlives the test that starts it and needs none of pytest's variables
    # (PYTEST_CURRENT_TEST holds the test's id, megabytes for a long parameter).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    for step in steps:
        done = subprocess.run([*as_user, *step], capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            shutil.rmtree(base, ignore_errors=True)
            raise RuntimeError(f"{Path(step[0]).name} failed: {done.stderr.strip()[-500:]}")
    return PgServer(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", base, as_user)


class PgDatabases:
    """Creates uniquely named databases on a server and drops them all at :meth:`drop_all`."""

    def __init__(self, server: PgServer) -> None:
        self.server = server
        self._names: list[str] = []
        self._admin = sa.create_engine(server.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)

    def create(self) -> str:
        name = f"hy_test_{uuid.uuid4().hex[:12]}"
        with self._admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        self._names.append(name)
        return self.server.database_url(name)

    def drop_all(self) -> None:
        with self._admin.connect() as conn:
            for name in self._names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._names.clear()
        self._admin.dispose()


class PgSchemas:
    """Unique schema prefixes in one shared database; :meth:`drop_all` drops their schemas.

    Cheaper than a database per test: a test's stores get schemas ``<prefix><name>``.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._prefixes: list[str] = []
        self._admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)

    def prefix(self) -> str:
        value = f"t{uuid.uuid4().hex[:10]}_"
        self._prefixes.append(value)
        return value

    def drop_all(self) -> None:
        with self._admin.connect() as conn:
            for prefix in self._prefixes:
                names = conn.execute(sa.text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :p"),
                                     {"p": prefix + "%"}).scalars().all()
                for name in names:
                    conn.execute(sa.text(f'DROP SCHEMA "{name}" CASCADE'))
        self._prefixes.clear()

    def dispose(self) -> None:
        self._admin.dispose()
