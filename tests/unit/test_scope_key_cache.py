"""A folder's scope key that needs redaction is redacted once, then remembered (without the secret)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mnemolog.adapters import scope_key_cache
from mnemolog.adapters.redaction import REDACTED, redact
from mnemolog.adapters.scope import folder_scope
from mnemolog.adapters.scope_key_cache import CACHE_FILE, redacted_scope_key
from support.memory import git_project

TOKEN = "ghp_" + "Ab1" * 12
KEY = f"path:/work/{TOKEN}/api"


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, key: str) -> str:
        self.calls += 1
        return redact(key)[0]


def test_a_key_is_redacted_once_and_remembered_without_its_secret(tmp_path: Path) -> None:
    counting = Counting()
    first = redacted_scope_key(KEY, counting, home=tmp_path)
    again = redacted_scope_key(KEY, counting, home=tmp_path)
    assert first == again == redact(KEY)[0] == f"path:/work/{REDACTED}/api"
    assert counting.calls == 1
    kept = (tmp_path / CACHE_FILE).read_text()
    assert TOKEN not in kept and "/work/" not in json.dumps(list(json.loads(kept)["keys"]))


def test_changed_rules_redact_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = Counting()
    redacted_scope_key(KEY, counting, home=tmp_path)
    monkeypatch.setattr(scope_key_cache, "rules_identity", lambda: "other rules")
    assert redacted_scope_key(KEY, counting, home=tmp_path) == redact(KEY)[0]
    assert counting.calls == 2


def test_a_broken_or_missing_cache_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_text("{not json")
    assert redacted_scope_key(KEY, home=tmp_path) == redact(KEY)[0]
    assert redacted_scope_key(KEY, home=tmp_path / "no-home-yet") == redact(KEY)[0]
    assert not (tmp_path / "no-home-yet").exists()


def test_the_scope_of_a_folder_seen_before_needs_no_redaction_rules(tmp_path: Path) -> None:
    folder = git_project(tmp_path / "work", f"https://{TOKEN}@example.com/acme/a-repository-with-a-long-name.git")
    home = tmp_path / "home"
    home.mkdir()
    probe = (
        "import sys; from mnemolog.adapters.scope import scope_for_cwd; "
        "print(scope_for_cwd(sys.argv[1])); print('mnemolog.adapters.redaction' in sys.modules)"
    )
    env = {**os.environ, "MNEMOLOG_HOME": str(home)}
    runs = [subprocess.run([sys.executable, "-c", probe, str(folder)], env=env, capture_output=True, text=True, check=True).stdout.split() for _ in range(2)]
    expected = folder_scope(folder)  # the rules themselves
    assert expected == "git:example.com/acme/a-repository-with-a-long-name"
    assert runs == [[expected, "True"], [expected, "False"]]
