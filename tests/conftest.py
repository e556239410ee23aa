"""Root conftest: the fixtures every test folder can use.

The PostgreSQL provider (fixtures ``postgres_server`` and ``postgres_dsn``,
and the end-of-run PostgreSQL summary) lives in ``tests/support/postgres.py``
and is loaded as a plugin; test modules import helpers such as
``postgres_env`` with ``from support.postgres import postgres_env``.
"""

# ``tests/`` is not a package, so pytest puts it on sys.path and ``support`` imports.
pytest_plugins = ("support.postgres", "support.stores", "support.fake_openai", "support.real_agents")
