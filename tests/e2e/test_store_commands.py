"""doctor, config and rebuild as a user runs them."""

from __future__ import annotations

from pathlib import Path

from support.cli import run_cli


def test_help_lists_the_commands() -> None:
    result = run_cli("--help")
    assert result.code == 0
    for command in ("ingest", "extract", "consolidate", "render", "run", "doctor", "config", "rebuild"):
        assert command in result.out


def test_doctor_on_a_new_embedded_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_cli("doctor", "--json", env={"MNEMOLOG_HOME": str(home)})
    assert result.code == 0, result.err
    report = result.json()
    assert report["backend"] == "sqlite"
    assert report["location"] == str(home)
    assert report["events"] == 0 and report["caught_up"] is True
    assert (home / "events.sqlite").exists()


def test_doctor_on_postgres(tmp_path: Path, postgres_dsn: str) -> None:
    result = run_cli("doctor", "--json", env={"MNEMOLOG_HOME": str(tmp_path), "MNEMOLOG_DATABASE_URL": postgres_dsn})
    assert result.code == 0, result.err
    report = result.json()
    assert report["backend"] == "postgres"
    assert "@" in report["location"] and ":mnemolog@" not in report["location"]


def test_config_shows_sources_and_masks_secrets(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('idle_hours = 2\nextract_model = "heuristic"\n')
    env = {
        "MNEMOLOG_HOME": str(tmp_path),
        "MNEMOLOG_MAX_SELECTED": "10",
        "OPENAI_API_KEY": "sk-test-abcdefghijklmnopqrstuvwxyz",
        "MNEMOLOG_DATABASE_URL": "postgresql://me:hunter2secret@db.example:5432/mem",
    }
    result = run_cli("config", "--json", env=env)
    assert result.code == 0, result.err
    config = result.json()
    assert config["idle_hours"] == {"value": "2.0", "source": f"file {tmp_path / 'config.toml'}"}
    assert config["max_selected"] == {"value": "10", "source": "env MNEMOLOG_MAX_SELECTED"}
    assert config["retention_days"]["source"] == "default"
    assert "hunter2secret" not in result.out and "abcdefghijklmnop" not in result.out
    assert config["database_url"]["value"] == "postgresql://me:***@db.example:5432/mem"


def test_a_bad_database_url_is_one_clear_error(tmp_path: Path) -> None:
    result = run_cli("doctor", env={"MNEMOLOG_HOME": str(tmp_path), "MNEMOLOG_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"})
    assert result.code == 1
    assert result.err.startswith("error: cannot open the store")
    assert "Traceback" not in result.err


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    for args in (("explain", "a", "b"), ("nosuch",), ("ingest", "--limit", "3")):
        result = run_cli(*args, env={"MNEMOLOG_HOME": str(tmp_path)})
        assert result.code == 2, args
        assert "error:" in result.err.lower() and "Traceback" not in result.err
