"""The real agents in the test suite: pinned npm packages, a fresh HOME, two projects, a scripted model.

``tests/run.sh`` installs the pinned packages (``agent_versions.txt``) into
``.cache/agents`` once; the ``agent_bin`` fixture uses them, installing them
itself with npm when they are missing. Under ``CI=true`` a missing agent fails
the test with the reason, never skips it.

``AgentWorld`` is what one test needs: a fresh HOME (no real config is
touched), ``MNEMOLOG_HOME``, projects A and B (git repositories with their
own remotes, so their scopes differ), and helpers to run an agent, wait for
the background capture of its session, and read the store.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support.agent_model_server import AgentModelServer, Recorded, Reply, ToolCall
from support.cli import Result, run_cli
from support.postgres import in_ci

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "agents"
VERSIONS = [line.strip() for line in (Path(__file__).with_name("agent_versions.txt")).read_text().splitlines() if line.strip()]
ITEM_ID = re.compile(r"\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")
CLAUDE_KEY = "sk-ant-local-0123456789abcdef"


def _installed(bin_dir: Path) -> bool:
    try:
        codex = subprocess.run([str(bin_dir / "codex"), "--version"], capture_output=True, text=True, timeout=60)
        claude = subprocess.run([str(bin_dir / "claude"), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    wanted = {spec.rsplit("@", 1)[0]: spec.rsplit("@", 1)[1] for spec in VERSIONS}
    return wanted["@openai/codex"] in codex.stdout and wanted["@anthropic-ai/claude-code"] in claude.stdout


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The folder with the pinned ``codex`` and ``claude`` (installed with npm into .cache/agents when missing)."""
    bin_dir = CACHE / "node_modules" / ".bin"
    if not _installed(bin_dir):
        npm = shutil.which("npm")
        problem = "npm is not on PATH"
        if npm:
            CACHE.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), *VERSIONS],
                capture_output=True, text=True, timeout=600,
            )
            problem = f"npm install failed: {done.stderr[-1500:]}"
        if not _installed(bin_dir):
            reason = f"the real agents ({', '.join(VERSIONS)}) are not installed: {problem}"
            if in_ci():
                pytest.fail(f"CI is set: {reason}", pytrace=False)
            pytest.skip(reason)
    return bin_dir


def _git_project(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    for command in (["git", "init", "-q", "."], ["git", "remote", "add", "origin", remote]):
        subprocess.run(command, cwd=path, check=True, capture_output=True)
    (path / "README.md").write_text(f"# {path.name}\n")
    return path


@dataclass
class AgentWorld:
    """A fresh HOME with projects A and B, mnemolog's store, and the pinned agents on PATH."""

    root: Path
    bin_dir: Path
    server: AgentModelServer
    home: Path = field(init=False)
    mnemolog_home: Path = field(init=False)
    project_a: Path = field(init=False)
    project_b: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.home.mkdir()
        self.mnemolog_home = self.root / "mnemolog"
        self.project_a = _git_project(self.root / "work" / "alpha", "https://example.com/acme/alpha.git")
        self.project_b = _git_project(self.root / "work" / "beta", "https://example.com/acme/beta.git")

    @property
    def env(self) -> dict[str, str]:
        """What the agents and mnemolog run with: this HOME and store, offline, exec/-p sessions extracted."""
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOLOG_", "OPENAI_", "ANTHROPIC_", "CODEX_", "CLAUDE_"))}
        return {
            **keep,
            "HOME": str(self.home),
            "MNEMOLOG_HOME": str(self.mnemolog_home),
            "MNEMOLOG_EXTRACT_NONINTERACTIVE": "true",
            "PATH": os.pathsep.join([str(self.bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "LOCAL_API_KEY": "local-test-key",
            "ANTHROPIC_BASE_URL": self.server.base_url,
            "ANTHROPIC_API_KEY": CLAUDE_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # MCP tools in `tools` directly (else the model must load them through ToolSearch first).
            "ENABLE_TOOL_SEARCH": "false",
            # Claude Code connects MCP servers without waiting by default: the first request can go out
            # before mnemolog's tools are listed. Wait for them, so the story is deterministic. Its
            # default connect time-out (5 s) stays: `mnemolog mcp` answers the handshake at once.
            "MCP_CONNECTION_NONBLOCKING": "0",
            "NO_COLOR": "1",
        }

    def mnemolog(self, *args: str, cwd: Path | None = None) -> Result:
        """``mnemolog ARGS`` in this world (in process)."""
        env = {k: v for k, v in self.env.items() if k != "PATH"} | {"PATH": self.env["PATH"]}
        return run_cli(*args, env=env, cwd=cwd or self.project_a)

    def run_agent(self, command: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run an agent command to its end (stdin closed), failing the test on a non-zero exit."""
        done = subprocess.run(command, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{command[0]} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    @property
    def capture_log(self) -> Path:
        """Where the SessionEnd hook's background captures report."""
        return self.mnemolog_home / "logs" / "capture.log"

    def wait_for_capture(self, count: int, timeout: float = 120) -> list[str]:
        """Wait until ``count`` sessions were captured by the hooks; the log's capture lines."""
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        while time.monotonic() < deadline:
            text = self.capture_log.read_text(encoding="utf-8", errors="replace") if self.capture_log.exists() else ""
            lines = [line for line in text.splitlines() if " captured " in line]
            if len(lines) >= count:
                return lines
            time.sleep(0.25)
        raise AssertionError(f"{len(lines)} of {count} sessions captured after {timeout} s; log:\n{self.capture_log.read_text() if self.capture_log.exists() else '(none)'}")

    def items(self) -> list[Any]:
        """Every active memory item (read from the store's views)."""
        from mnemolog.adapters.settings import Settings
        from mnemolog.adapters.store import open_store
        from mnemolog.projections.view_reads import ViewReads

        store = open_store(Settings(home=self.mnemolog_home))
        try:
            store.catch_up()
            return list(ViewReads(store.view).active_items())
        finally:
            store.close()

    def session_items(self, source: str, native_id: str) -> list[Any]:
        """The transcript items the log holds for one session, and what phase 1 is shown of them."""
        from mnemolog.adapters.settings import Settings
        from mnemolog.adapters.store import open_store
        from mnemolog.domain.services.extract import transcript_of
        from mnemolog.domain.session import session_id_for

        store = open_store(Settings(home=self.mnemolog_home))
        try:
            session = store.app.repository.get(session_id_for(source, native_id))
            return [list(session.transcript), list(transcript_of(session).items)]
        finally:
            store.close()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ the scripted model


@dataclass
class MemoryUsingModel:
    """A model that, when mnemolog's search tool is offered, searches memory once and cites what it found.

    - a turn without the tool, or a first session: answers ``first_answer``;
    - the tool offered and not yet called: calls it with ``query``;
    - after the tool answered: replies citing every item id of the answer as ``[item:<id>]``.
    """

    query: str
    first_answer: str = "Noted."

    def __call__(self, request: Recorded) -> Reply:
        if not request.is_main_turn:
            return Reply(text="Session")  # Claude Code's side requests (titles and the like)
        outputs = request.tool_outputs()
        if outputs:
            ids = list(dict.fromkeys(ITEM_ID.findall(" ".join(outputs))))
            cited = " ".join(f"[item:{i}]" for i in ids)
            return Reply(text=f"I followed the project's memory. {cited}".strip())
        names = request.tool_names
        if request.wire == "responses" and "mcp__mnemolog.search_memory" in names and _asks(request):
            return Reply(tool_call=ToolCall("search_memory", {"query": self.query}, namespace="mcp__mnemolog"))
        if request.wire == "messages" and "mcp__mnemolog__search_memory" in names and _asks(request):
            return Reply(tool_call=ToolCall("mcp__mnemolog__search_memory", {"query": self.query}))
        return Reply(text=self.first_answer)


def _asks(request: Recorded) -> bool:
    # Search only in a session whose prompt asks something (the first session states a rule).
    turns = request.body.get("input" if request.wire == "responses" else "messages") or []
    return "?" in json.dumps(turns[-1:]) if turns else False


@pytest.fixture
def agent_world(tmp_path: Path, agent_bin: Path) -> Iterator[tuple[AgentWorld, MemoryUsingModel]]:
    """A world and its scripted model server (the model's query is set by the test)."""
    model = MemoryUsingModel(query="")
    with AgentModelServer(model) as server:
        yield AgentWorld(tmp_path, agent_bin, server), model


# ------------------------------------------------------------------ the time they take, in the run's summary

_TIMES: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the time of every real-agent test (setup, call and teardown)."""
    if "/test_real_" in report.nodeid:
        _TIMES[report.nodeid] = _TIMES.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per real-agent test with its time, and the total."""
    if _TIMES:
        lines = [f"  {seconds:6.1f} s  {nodeid}" for nodeid, seconds in sorted(_TIMES.items())]
        terminalreporter.write_line(f"real agents ({', '.join(VERSIONS)}): {len(_TIMES)} tests, {sum(_TIMES.values()):.1f} s")
        for line in lines:
            terminalreporter.write_line(line)
