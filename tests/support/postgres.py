"""PostgreSQL for the test suite: a pytest plugin loaded by ``tests/conftest.py``.

The server is provisioned once per test session (once per pytest-xdist worker),
taking the first of:

1. a DSN from ``MNEMOLOG_TEST_POSTGRES_URL`` (used as given; if it does not
   answer, nothing else is tried);
2. a ``testcontainers`` PostgreSQL container, when a Docker engine answers;
3. a throwaway cluster made with the PostgreSQL server binaries on the machine
   (``initdb``/``pg_ctl`` on ``PATH`` or under ``/usr/lib/postgresql/*/bin``),
   run as the ``postgres`` OS user when the suite runs as root.

With ``CI`` set to a true value, failing to provision is a test failure;
otherwise the tests that need PostgreSQL are skipped with the reason.

Fixtures:

- ``postgres_server`` (session): a :class:`PostgresServer`.
- ``postgres_dsn`` (module): a fresh database per test module, as
  ``postgresql://user:password@host:port/dbname``; dropped afterwards.

:func:`postgres_env` turns such a DSN into the environment variables of
``eventsourcing.postgres``. At the end of the run the terminal summary says how
many tests ran against PostgreSQL and how it was provisioned; under CI a test
that needed PostgreSQL and was skipped fails the run.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

ENV_URL = "MNEMOLOG_TEST_POSTGRES_URL"
DOCKER_IMAGE = "postgres:15"
# The throwaway cluster and the container use the same credentials as docker-compose.yml.
DEFAULT_USER = "mnemolog"
DEFAULT_PASSWORD = "mnemolog"
OS_USER_WHEN_ROOT = "postgres"

_START_ATTEMPTS = 3
_HOW_KEY = pytest.StashKey[tuple[str, float]]()
_REPORT_ATTR = "mnemolog_postgres"  # how the server was provisioned, and in how many seconds


class ProvisioningError(RuntimeError):
    """No PostgreSQL server could be provided; the message says why."""


@dataclass(frozen=True)
class PostgresServer:
    """A running PostgreSQL server the tests may create databases on."""

    host: str
    port: int
    user: str
    password: str
    # The database the fixture connects to for CREATE/DROP DATABASE.
    admin_dbname: str = "postgres"
    # How the server was provided, for the end-of-run summary.
    how: str = field(default="", compare=False)

    def dsn(self, dbname: str | None = None) -> str:
        """Return ``postgresql://user:password@host:port/dbname``."""
        credentials = quote(self.user, safe="")
        if self.password:
            credentials += ":" + quote(self.password, safe="")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{credentials}@{host}:{self.port}/{quote(dbname or self.admin_dbname, safe='')}"

    def connect(self, dbname: str | None = None, **kwargs: Any) -> psycopg.Connection[Any]:
        """Open a psycopg connection to ``dbname`` (default: the admin database)."""
        return psycopg.connect(self.dsn(dbname), connect_timeout=10, **kwargs)


def in_ci() -> bool:
    """True when the ``CI`` environment variable says we run in CI."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def postgres_env(dsn: str) -> dict[str, str]:
    """Return the ``eventsourcing.postgres`` environment variables for ``dsn``.

    >>> postgres_env("postgresql://u:p@127.0.0.1:5433/db")["POSTGRES_PORT"]
    '5433'
    """
    params = conninfo_to_dict(dsn)
    missing = [key for key in ("dbname", "host", "user") if not params.get(key)]
    if missing:
        raise ValueError(f"DSN lacks {', '.join(missing)}: eventsourcing needs them explicitly")
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": str(params["dbname"]),
        "POSTGRES_HOST": str(params["host"]),
        "POSTGRES_PORT": str(params.get("port") or "5432"),
        "POSTGRES_USER": str(params["user"]),
        # eventsourcing refuses a missing password even where the server trusts the client.
        "POSTGRES_PASSWORD": str(params.get("password") or ""),
    }


# --------------------------------------------------------------------------- providers


def _server_version(server: PostgresServer) -> str:
    with server.connect() as conn:
        number = conn.info.server_version
    return f"{number // 10000}.{number % 10000}"


def _from_env_url(url: str) -> PostgresServer:
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise ProvisioningError(f"{ENV_URL} is not a valid DSN: {exc}") from exc
    server = PostgresServer(
        host=str(params.get("host") or "localhost"),
        port=int(params.get("port") or 5432),
        user=str(params.get("user") or DEFAULT_USER),
        password=str(params.get("password") or ""),
        admin_dbname=str(params.get("dbname") or "postgres"),
    )
    try:
        version = _server_version(server)
    except psycopg.Error as exc:
        raise ProvisioningError(f"{ENV_URL} is set but the server does not answer: {exc}") from exc
    return _with_how(server, f"{ENV_URL} ({server.host}:{server.port}, PostgreSQL {version})")


def _docker_answers(timeout: float = 2.0) -> str | None:
    """Return None when a Docker engine answers, else why not."""
    try:
        import docker

        client = docker.from_env(timeout=timeout)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # any failure means "no usable engine"
        return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return None


def _from_docker() -> tuple[PostgresServer, Callable[[], None]]:
    try:
        from testcontainers.community.postgres import PostgresContainer
    except ImportError:  # testcontainers < 4.15
        from testcontainers.postgres import PostgresContainer

    container = PostgresContainer(
        DOCKER_IMAGE,
        username=DEFAULT_USER,
        password=DEFAULT_PASSWORD,
        dbname=DEFAULT_USER,
        driver=None,
    )
    container.start()
    try:
        server = PostgresServer(
            host=container.get_container_host_ip(),
            port=int(container.get_exposed_port(5432)),
            user=DEFAULT_USER,
            password=DEFAULT_PASSWORD,
            admin_dbname=DEFAULT_USER,
        )
        version = _server_version(server)
    except BaseException:
        container.stop()
        raise
    how = f"a testcontainers {DOCKER_IMAGE} container (PostgreSQL {version})"
    return _with_how(server, how), container.stop


def find_postgres_bindir() -> Path | None:
    """Return the folder holding ``initdb`` and ``pg_ctl``, newest version first."""
    candidates: list[Path] = []
    initdb = shutil.which("initdb")
    if initdb:
        # Resolve symlinks so that pg_ctl and postgres come from the same installation.
        candidates.append(Path(os.path.realpath(initdb)).parent)
    found = glob.glob("/usr/lib/postgresql/*/bin")
    found.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", p)], reverse=True)
    candidates.extend(Path(p) for p in found)
    for bindir in candidates:
        if all(os.access(bindir / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres")):
            return bindir
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalCluster:
    """A throwaway cluster in a temporary folder, made with ``initdb`` and ``pg_ctl``."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.as_root = os.geteuid() == 0
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        # mkdtemp names are unique, so xdist workers never share a folder or a socket.
        self.root = Path(tempfile.mkdtemp(prefix=f"mnemolog-pg-{worker}-"))
        self.datadir = self.root / "data"
        self.logfile = self.root / "postgres.log"
        self.port = 0
        self.started = False

    def _command(self, *args: str) -> list[str]:
        if not self.as_root:
            return list(args)
        # PostgreSQL refuses to run as root.
        runuser = shutil.which("runuser")
        if runuser:
            return [runuser, "-u", OS_USER_WHEN_ROOT, "--", *args]
        su = shutil.which("su")
        if su:
            return [su, OS_USER_WHEN_ROOT, "-s", "/bin/sh", "-c", shlex.join(args)]
        raise ProvisioningError("running as root, but neither runuser nor su is available")

    def _run(self, *args: str, timeout: float = 60) -> None:
        command = self._command(*args)
        try:
            result = subprocess.run(
                command,
                cwd=self.root,  # the postgres user may not be able to enter the caller's cwd
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ProvisioningError(f"{shlex.join(command)} failed: {exc}") from exc
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip()
            raise ProvisioningError(
                f"{shlex.join(command)} exited with {result.returncode}:\n{output[-2000:]}"
                + self._log_tail()
            )

    def _log_tail(self) -> str:
        try:
            return "\n--- server log ---\n" + self.logfile.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def start(self) -> PostgresServer:
        """Initialise the cluster and start it on a free loopback port."""
        if self.as_root:
            try:
                entry = pwd.getpwnam(OS_USER_WHEN_ROOT)
            except KeyError as exc:
                raise ProvisioningError(
                    f"running as root, but there is no {OS_USER_WHEN_ROOT!r} OS user to run "
                    "PostgreSQL as (install the postgresql package, or run the tests as a normal user)"
                ) from exc
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D", str(self.datadir),
            "-U", DEFAULT_USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.root}'",
            # Durability is worthless for a cluster deleted at the end of the run.
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            # Tests open many pooled connections (eventsourcing pools per application).
            "max_connections": "200",
        }
        with (self.datadir / "postgresql.conf").open("a") as conf:
            conf.write("\n# mnemolog test cluster\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

        # Another process may take the free port before the server binds it: retry.
        for attempt in range(1, _START_ATTEMPTS + 1):
            self.port = _free_port()
            try:
                self._run(
                    str(self.bindir / "pg_ctl"),
                    "-D", str(self.datadir),
                    "-l", str(self.logfile),  # also keeps the server off our pipes
                    "-o", f"-p {self.port}",
                    "-w", "-t", "60",
                    "start",
                    timeout=90,
                )  # fmt: skip
                break
            except ProvisioningError:
                if attempt == _START_ATTEMPTS:
                    raise
        self.started = True
        return PostgresServer("127.0.0.1", self.port, DEFAULT_USER, DEFAULT_PASSWORD)

    def stop(self) -> None:
        """Stop the server and delete the folder; safe to call twice."""
        if self.started:
            self.started = False
            with contextlib.suppress(ProvisioningError):
                self._run(
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.datadir),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                )
        shutil.rmtree(self.root, ignore_errors=True)


def _from_local_binaries(bindir: Path) -> tuple[PostgresServer, Callable[[], None]]:
    cluster = LocalCluster(bindir)
    atexit.register(cluster.stop)  # in case the session never reaches fixture teardown
    try:
        server = cluster.start()
        version = _server_version(server)
    except BaseException:
        cluster.stop()
        raise
    how = f"a throwaway initdb cluster (PostgreSQL {version}, {bindir})"
    return _with_how(server, how), cluster.stop


def _with_how(server: PostgresServer, how: str) -> PostgresServer:
    return PostgresServer(
        server.host, server.port, server.user, server.password, server.admin_dbname, how
    )


def provision() -> tuple[PostgresServer, Callable[[], None]]:
    """Provide a server by the first method that works; return it and its stop function."""
    url = os.environ.get(ENV_URL, "").strip()
    if url:
        return _from_env_url(url), lambda: None

    reasons = [f"{ENV_URL} is not set"]
    why_not = _docker_answers()
    if why_not is None:
        try:
            return _from_docker()
        except Exception as exc:
            reasons.append(f"a Docker engine answers but the container failed: {exc}")
    else:
        reasons.append(f"no Docker engine answers ({why_not})")

    bindir = find_postgres_bindir()
    if bindir is None:
        reasons.append("no initdb/pg_ctl on PATH or under /usr/lib/postgresql/*/bin")
        raise ProvisioningError(
            "; ".join(reasons)
            + ". Set the variable, start Docker, or install the PostgreSQL server binaries"
        )
    try:
        return _from_local_binaries(bindir)
    except ProvisioningError as exc:
        reasons.append(f"the local cluster failed: {exc}")
        raise ProvisioningError("; ".join(reasons)) from exc


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def postgres_server(request: pytest.FixtureRequest) -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (per xdist worker)."""
    started = time.monotonic()
    try:
        server, stop = provision()
    except ProvisioningError as exc:
        if in_ci():
            pytest.fail(f"CI is set and PostgreSQL could not be provisioned: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL not available: {exc}")
    request.config.stash[_HOW_KEY] = (server.how, time.monotonic() - started)
    try:
        yield server
    finally:
        stop()


def _database_name(module: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", module.rsplit(".", 1)[-1].lower()).strip("_")
    return f"t_{stem[:40]}_{uuid.uuid4().hex[:12]}"


def drop_database(server: PostgresServer, dbname: str) -> None:
    """Drop ``dbname`` after terminating every connection to it."""
    with server.connect(autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )
        drop = sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(dbname))
        if conn.info.server_version >= 130000:
            drop = sql.SQL("{} WITH (FORCE)").format(drop)
        conn.execute(drop)


@pytest.fixture(scope="module")
def postgres_dsn(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A DSN to a database of its own for this test module, dropped afterwards."""
    dbname = _database_name(request.module.__name__)
    with postgres_server.connect(autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    try:
        yield postgres_server.dsn(dbname)
    finally:
        drop_database(postgres_server, dbname)


# --------------------------------------------------------------------------- hooks


def _needs_postgres(item: pytest.Item) -> bool:
    # fixturenames is the closure, so postgres_dsn users are included.
    if "postgres_server" in getattr(item, "fixturenames", ()):
        return True
    # Tests parametrised over backends (support/stores.py) ask for PostgreSQL dynamically.
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") == "postgres"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs PostgreSQL ``postgres`` (so ``-m 'not postgres'`` works)."""
    for item in items:
        if _needs_postgres(item):
            item.add_marker(pytest.mark.postgres)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Tag the reports of PostgreSQL tests with how the server was provisioned.

    The tag is a report attribute so that it travels from xdist workers to the
    controller, which prints the summary.
    """
    report = yield
    if _needs_postgres(item):
        # A list, not a tuple, so that it reads the same after xdist's JSON round trip.
        how: tuple[str, float] = item.config.stash.get(_HOW_KEY, ("", 0.0))
        setattr(report, _REPORT_ATTR, list(how))
    return report


class PostgresSummary:
    """Counts PostgreSQL tests that ran or were skipped; prints and enforces the result."""

    def __init__(self) -> None:
        self.ran: dict[str, str] = {}
        self.skipped: dict[str, str] = {}
        self.startup_seconds = 0.0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tag = getattr(report, _REPORT_ATTR, None)
        if tag is None:
            return
        how, seconds = tag
        if report.skipped and not hasattr(report, "wasxfail"):
            longrepr = report.longrepr
            reason = str(longrepr[2] if isinstance(longrepr, (tuple, list)) else longrepr)
            self.skipped[report.nodeid] = reason.removeprefix("Skipped: ")
        elif report.when == "call":
            self.ran[report.nodeid] = how
            self.startup_seconds = max(self.startup_seconds, seconds)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if in_ci() and self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.ran and not self.skipped:
            terminalreporter.write_line("PostgreSQL: no test needed it")
            return
        hows = sorted(set(self.ran.values()))
        line = f"PostgreSQL: {len(self.ran)} tests ran against {' and '.join(hows) or 'no server'}"
        if self.ran:
            line += f", provisioned in {self.startup_seconds:.1f}s"
        if self.skipped:
            reasons = sorted(set(self.skipped.values()))
            line += f"; {len(self.skipped)} skipped: {reasons[0]}"
        terminalreporter.write_line(line, bold=True)
        if in_ci() and self.skipped:
            terminalreporter.write_line(
                f"CI is set: {len(self.skipped)} tests that need PostgreSQL were skipped; "
                "failing the run (PostgreSQL tests must run in CI).",
                red=True,
                bold=True,
            )


def pytest_configure(config: pytest.Config) -> None:
    """Register the summary on the process that prints it (not on xdist workers)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(PostgresSummary(), "mnemolog-postgres-summary")
