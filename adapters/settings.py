"""One typed settings object: defaults, then ``$MNEMOLOG_HOME/config.toml``, then ``MNEMOLOG_*`` variables.

``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` work as they do for the ``openai``
client; the per-phase ``extract_*`` and ``consolidate_*`` settings override them.

A pydantic model gathering its sources itself (``Settings.__init__``): as
pydantic-settings did (variable names in any case, a field's alias instead of
its prefixed name), without that library's import (asyncio, argparse, dotenv
and every cloud provider: ~15% of the SessionStart hook's start-up).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemolog.adapters.home import resolve_home as resolve_home
from pydantic import BaseModel, ConfigDict, Field, SecretStr

if TYPE_CHECKING:
    from mnemolog.domain.eligibility import EligibilityPolicy
    from mnemolog.domain.services.extract import ClaimPolicy

CONFIG_FILE = "config.toml"


ENV_PREFIX = "MNEMOLOG_"


class Settings(BaseModel):
    """Everything mnemolog can be configured with.

    ``Settings(**values)`` takes, for each field, the value given, else the
    variable ``MNEMOLOG_<FIELD>`` (its alias for ``OPENAI_*``; names in any
    case), else ``$MNEMOLOG_HOME/config.toml``, else the default.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True, validate_default=True)

    home: Path = Field(default_factory=resolve_home, description="Where the embedded store and the memory folder live.")
    database_url: SecretStr | None = Field(default=None, description="A PostgreSQL URL; unset means SQLite in home.")
    memory_dir: Path | None = Field(default=None, description="Where `run` renders the folder (default: home/memories).")

    extract_model: str = Field(default="auto", description="Model for phase 1; 'heuristic' for the offline extractor; 'auto' = gpt-5-mini with a key, else heuristic.")
    extract_base_url: str | None = None
    extract_api_key: SecretStr | None = None
    consolidate_model: str = Field(default="auto", description="Model for phase 2; 'heuristic' for the offline consolidator.")
    consolidate_base_url: str | None = None
    consolidate_api_key: SecretStr | None = None
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY", description="The key of an 'anthropic:' model (the Messages API).")
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    model_timeout: float = Field(default=120.0, description="Seconds to wait for a model's first answer byte, before the input's share (below).")
    model_timeout_per_1k_input: float | None = Field(default=None, description="Seconds more per 1,000 input tokens (prompt processing); unset: 20 for a local base URL, 2 for a hosted API.")
    model_retries: int = 4
    model_backoff: float = 1.0
    model_context_tokens: int | None = Field(default=None, description="The model's context window when the server does not say (llama.cpp and vLLM say; Ollama and hosted APIs do not).")
    model_max_output_tokens: int = Field(default=4_096, description="The cap on one answer's tokens (sent as max_tokens).")
    model_stream: bool | None = Field(default=None, description="Stream answers (progress on a terminal, a looping answer stopped early); unset: on for a local base URL.")
    model_schema: str = Field(default="auto", description="Phase 2's answer schema: 'full', 'compact' (the fields a decision needs, for small models), or 'auto': compact for a local base URL.")
    model_concurrency: int | None = Field(default=None, description="Model requests at once in phase 1; unset: 1 for a local base URL, else extract_workers.")
    extract_workers: int = 4
    extract_input_tokens: int = 24_000
    consolidate_input_tokens: int = Field(default=100_000, description="Phase 2's input budget (lowered to fit the model's context window).")

    idle_hours: float = Field(default=6.0, description="A session must be idle this long before phase 1.")
    max_age_days: float = Field(default=10.0, description="Phase 1 skips sessions older than this.")
    extract_noninteractive: bool = Field(default=False, description="Phase 1 also takes `codex exec` and `claude -p` sessions (subagent threads never).")
    retention_days: float = Field(default=30.0, description="Phase 2 keeps extractions used (or new) within this window.")
    max_selected: int = Field(default=256, description="Phase 2 selects at most this many extractions.")
    max_attempts: int = 3
    claim_lease_seconds: float = 900.0
    context_tokens: int = 3_000
    prompt_recall_tokens: int = Field(default=300, ge=0, description="What the prompt hook may add to one prompt: relevant recall hits the session was not given yet, in tokens (0: nothing).")
    embedding_model: str = Field(default="default", description="The embedding model search ranks by meaning with ('default': the packaged one; 'none': words only).")
    disable_on_external_context: bool = Field(default=False, description="Mark sessions that used web search or MCP tools as polluted.")
    tombstone_key: SecretStr | None = Field(default=None, description="Key for tombstone hashes; generated into home on first use.")
    max_line_bytes: int = Field(default=8 * 1024 * 1024, gt=0, description="Session lines longer than this are skipped.")
    max_file_bytes: int = Field(default=1024 * 1024 * 1024, gt=0, description="Session files larger than this (decompressed) are skipped.")
    max_nesting: int = Field(default=64, gt=0, description="Session lines nested deeper than this are skipped.")
    consolidate_lease_seconds: float = Field(default=1800.0, gt=0, description="How long a consolidation holds the lease (a dead holder on this host frees it at once).")

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**_file_values(), **_env_values(os.environ), **values})

    @property
    def folder(self) -> Path:
        """Where the rendered memory folder goes by default."""
        return self.memory_dir or self.home / "memories"


def _env_name(name: str, alias: str | None) -> str:
    """The variable a field is read from (lower case: names match in any case)."""
    return (alias or f"{ENV_PREFIX}{name}").lower()


def _env_values(env: Mapping[str, str]) -> dict[str, str]:
    """The fields set by variables, by field name."""
    given = {key.lower(): value for key, value in env.items()}
    names = {_env_name(name, field.validation_alias if isinstance(field.validation_alias, str) else None): name for name, field in Settings.model_fields.items()}
    return {names[key]: value for key, value in given.items() if key in names}


def _file_values() -> dict[str, Any]:
    """The fields set in ``$MNEMOLOG_HOME/config.toml`` (none when there is no file)."""
    path = resolve_home() / CONFIG_FILE
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        values = tomllib.load(handle)
    aliases = {field.validation_alias: name for name, field in Settings.model_fields.items() if isinstance(field.validation_alias, str)}
    return {aliases.get(key, key): value for key, value in values.items()}  # an alias counts as its field's name


def eligibility_policy(settings: Settings, since: datetime | None = None, all_sessions: bool = False) -> EligibilityPolicy:
    """Which sessions phase 1 may take: the configured idle time and age window, or ``--since`` / ``--all``."""
    from mnemolog.domain.eligibility import EligibilityPolicy

    idle = timedelta(hours=settings.idle_hours)
    scripted = settings.extract_noninteractive
    if all_sessions:
        return EligibilityPolicy(idle=idle, max_age=None, include_noninteractive=scripted)
    if since is not None:
        return EligibilityPolicy(idle=idle, max_age=None, since=since, include_noninteractive=scripted)
    return EligibilityPolicy(idle=idle, max_age=timedelta(days=settings.max_age_days), include_noninteractive=scripted)


def claim_policy(settings: Settings) -> ClaimPolicy:
    """How long a phase-1 claim holds and how often a session is tried, as configured."""
    from mnemolog.domain.services.extract import ClaimPolicy

    return ClaimPolicy(lease=timedelta(seconds=settings.claim_lease_seconds), max_attempts=settings.max_attempts)


SECRET_FIELDS = {"database_url", "extract_api_key", "consolidate_api_key", "openai_api_key", "anthropic_api_key", "tombstone_key"}


def load_settings(**overrides: Any) -> Settings:
    """Read the settings (the TOML file is found through ``$MNEMOLOG_HOME``)."""
    return Settings(**overrides)


def describe(settings: Settings, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """Each setting as (name, shown value, where it came from), secrets masked."""
    env = os.environ if env is None else env
    path = resolve_home(env) / CONFIG_FILE
    from_file: dict[str, Any] = {}
    if path.is_file():
        with path.open("rb") as handle:
            from_file = tomllib.load(handle)
    rows = []
    for name, field in Settings.model_fields.items():
        value = getattr(settings, name)
        alias = field.validation_alias if isinstance(field.validation_alias, str) else None
        env_name = alias or f"MNEMOLOG_{name.upper()}"
        if env_name in env:
            source = f"env {env_name}"
        elif name in from_file:
            source = f"file {path}"
        else:
            source = "default"
        shown = "(unset)" if value is None else str(value)
        if name in SECRET_FIELDS and value is not None:
            secret = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
            shown = _mask(secret)
        rows.append((name, shown, source))
    return rows


def _mask(secret: str) -> str:
    if "://" in secret:  # a URL: keep scheme, host and database, hide the password
        from urllib.parse import urlsplit

        parts = urlsplit(secret)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}:***@" if parts.username else ""
        return f"{parts.scheme}://{user}{host}{port}{parts.path}"
    return "***" if len(secret) < 12 else f"{secret[:3]}***{secret[-2:]}"
