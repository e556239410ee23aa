"""The PostgreSQL fixtures provide a working server and one database per test module."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event
from psycopg.conninfo import conninfo_to_dict
from support.postgres import ENV_URL, PostgresServer, postgres_env

pytest_plugins = ("pytester",)


def test_select_one_and_create_table(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        conn.execute("create table probe (id serial primary key, note text not null)")
        conn.execute("insert into probe (note) values (%s)", ("hello",))
        assert conn.execute("select note from probe").fetchall() == [("hello",)]


def test_dsn_names_a_fresh_database_of_this_module(
    postgres_dsn: str, postgres_server: PostgresServer
) -> None:
    params = conninfo_to_dict(postgres_dsn)
    assert params["host"] == postgres_server.host
    assert int(params["port"]) == postgres_server.port
    assert params["dbname"] != postgres_server.admin_dbname
    assert str(params["dbname"]).startswith("t_test_postgres_fixture_")


class Probe(Aggregate):
    """The smallest aggregate that proves eventsourcing can use the database."""

    @event("Created")
    def __init__(self, note: str) -> None:
        self.note = note


def test_postgres_env_configures_eventsourcing(postgres_dsn: str) -> None:
    env = postgres_env(postgres_dsn)
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"
    app: Application = Application(env=env)
    try:
        probe = Probe("saved in PostgreSQL")
        app.save(probe)
        assert app.repository.get(probe.id).note == "saved in PostgreSQL"
    finally:
        app.close()


def test_postgres_env_rejects_a_dsn_without_host() -> None:
    with pytest.raises(ValueError, match="host"):
        postgres_env("dbname=x user=y")


# Two modules, run by an inner pytest session against this session's server: the
# first creates a table and records its database, the second must not see it.
_MODULE_A = """
import json, pathlib, psycopg
from psycopg.conninfo import conninfo_to_dict

def test_a(postgres_dsn):
    with psycopg.connect(postgres_dsn) as conn:
        conn.execute("create table only_in_a (x int)")
    name = conninfo_to_dict(postgres_dsn)["dbname"]
    pathlib.Path("a.json").write_text(json.dumps(name))
"""

_MODULE_B = """
import json, pathlib, psycopg
from psycopg.conninfo import conninfo_to_dict

def test_b(postgres_dsn):
    with psycopg.connect(postgres_dsn) as conn:
        found = conn.execute("select to_regclass('only_in_a')").fetchone()
    assert found == (None,)
    name = conninfo_to_dict(postgres_dsn)["dbname"]
    pathlib.Path("b.json").write_text(json.dumps(name))
"""


def test_each_module_gets_its_own_database_and_it_is_dropped(
    postgres_server: PostgresServer, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, postgres_server.dsn())
    pytester.makeini("[pytest]\nmarkers =\n    postgres: needs PostgreSQL\n")
    pytester.makepyfile(test_a=_MODULE_A, test_b=_MODULE_B)

    result = pytester.runpytest_inprocess("-p", "support.postgres", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"PostgreSQL: 2 tests ran against {ENV_URL} *"])
    names = [json.loads(Path(pytester.path, f).read_text()) for f in ("a.json", "b.json")]
    assert names[0] != names[1]
    with postgres_server.connect() as conn:
        left = conn.execute(
            "select datname from pg_database where datname = any(%s)", (names,)
        ).fetchall()
    assert left == []
