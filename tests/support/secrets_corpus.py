"""Planted fake secrets, and sessions that carry them, for redaction tests.

Every value is made up. They are assembled from pieces at import time so that
secret scanners (push protection, pre-commit hooks) do not mistake this file
for a leak. ``SECRETS`` lists ``(kind, value)``: ``value`` is the exact text that
must not survive redaction anywhere. ``planted(kind, value)`` is how the value
appears in a session (an assignment, a header, a URL...).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _join(*parts: str) -> str:
    return "".join(parts)


_JWT = ".".join(
    (
        _b64url({"alg": "HS256", "typ": "JWT"}),
        _b64url({"sub": "mnemolog-test-user", "iat": 1767225600, "role": "admin"}),
        "q7Kd0Zr3Vx9LpA2mYt5Ws8NcEu4JhBf6GiOa1Rk3Tlo",
    )
)

_RSA_BLOCK = "\n".join(
    (
        _join("-----BEGIN RSA ", "PRIVATE KEY-----"),
        "MIIEpAIBAAKCAQEA3mnemoLogFakeKeyMaterialQ8vX2kP7rT4wY9zB1cD5eF6gH",
        "7jK0lM3nO6pQ9sR2tU5vW8xY1zA4bC7dE0fG3hI6jK9lM2nO5pQ8rS1tU4vW7xY0",
        "zA3bC6dE9fG2hI5jK8lM1nO4pQ7rS0tU3vW6xY9zA2bC5dE8fG1hI4jK7lM0nO3p",
        _join("-----END RSA ", "PRIVATE KEY-----"),
    )
)
_OPENSSH_BLOCK = "\n".join(
    (
        _join("-----BEGIN OPENSSH ", "PRIVATE KEY-----"),
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACBmbmVtb2xvZy10ZXN0LWtleS1kby1ub3QtdXNlLWl0LWFueXdoZXJlAAAA",
        _join("-----END OPENSSH ", "PRIVATE KEY-----"),
    )
)
_EC_BLOCK = "\n".join(
    (
        _join("-----BEGIN EC ", "PRIVATE KEY-----"),
        "MHcCAQEEIFakeEcKeyForMnemologTests0123456789abcdefoAoGCCqGSM49AwEHoUQDQg",
        "AEzZ8pLx3Qv7Rk2Wt9Ny4Bm6Hc1Jd5Gf0Ks8Lu3Ow7Pi2Ej6Va9Ty4Xr1Mq5Nz8Bc3Df6Gh==",
        _join("-----END EC ", "PRIVATE KEY-----"),
    )
)
_PKCS8_BLOCK = "\n".join(
    (
        _join("-----BEGIN ", "PRIVATE KEY-----"),
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCmnemoPkcs8FakeKeyZz",
        _join("-----END ", "PRIVATE KEY-----"),
    )
)

SECRETS: list[tuple[str, str]] = [
    ("aws access key id", _join("AKIA", "4MNEMOLOGTEST7QZ")),
    ("aws temporary key id", _join("ASIA", "Y7MNEMOFAKE3KEYQ")),
    ("aws secret access key", _join("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYmnemoLOGKEY9")),
    ("github classic token", _join("ghp_", "R8mN2kQ7vX4tL9wP3sJ6hB1cF5gD0aZ8yE2u")),
    ("github oauth token", _join("gho_", "T4kW9pL2xM7nQ3vR8sJ1hB6cF0gD5aZ2yE7u")),
    (
        "github fine-grained token",
        _join(
            "github_pat_",
            "11ABCDEFG0mnemoLogTest_",
            "q9W8e7R6t5Y4u3I2o1P0aSdFgHjKlZxCvBnM1234567890abcdEFGH",
        ),
    ),
    ("gitlab token", _join("glpat-", "x7Yz3Kq9Lm2Np5Rt8Vw1")),
    ("slack bot token", _join("xoxb-", "2481632641-5720194736281-", "Zq8Wm3Nx7Rk2Lp9Tv4Bc6Hd")),
    (
        "slack user token",
        _join("xoxp-", "1357924680-2468013579-1122334455-", "a1b2c3d4e5f6a7b8c9d0"),
    ),
    (
        "slack webhook",
        _join(
            "https://hooks.slack.com/services/",
            "T01MNEMO42/",
            "B02LOGTEST9/",
            "Xk8Zq3Wm7Rn2Lp9Tv4Bc6Hd1",
        ),
    ),
    ("stripe secret key", _join("sk_live_", "51Hm9QxR2kL7vN4tP8wJ3sZ6")),
    ("stripe restricted key", _join("rk_live_", "51Jq2WxT8mK4vB7nL3pR9sY5")),
    ("stripe test key", _join("sk_test_", "4eC39HqLyjWDarjtT1zdp7dc")),
    ("json web token", _JWT),
    ("rsa private key", _RSA_BLOCK),
    ("openssh private key", _OPENSSH_BLOCK),
    ("ec private key", _EC_BLOCK),
    ("pkcs8 private key", _PKCS8_BLOCK),
    ("postgres password", "Pg-Pass-7f3K9q2W"),
    ("mysql password", "My5ql_Secr3t_pw!"),
    ("mongodb password", "M0ngoAtlasPw8842"),
    ("redis password", "Redis-Pw-99xQ7zT"),
    ("https basic auth password", "Deploy-Tok-42zzQ8"),
    ("bearer token", _join("eyQ0aVbN3", "mL8kP2xR7tW5zS9cF4hJ6gD1")),
    ("openai project key", _join("sk-proj-", "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5qS7uW9yA1cE3")),
    ("openai legacy key", _join("sk-", "mnemoLogFake1234567Z", "T3BlbkFJ", "q8W7e6R5t4Y3u2I1o0Pa")),
    (
        "anthropic key",
        _join("sk-ant-api03-", "Zx9Cv8Bn7Mm6Lk5Jh4Gf3Dd2Ss1Aa0Qq9Ww8Ee7Rr6Tt5Yy4Uu3Ii2Oo1Pp"),
    ),
    ("password assignment", "hunter2-Corr3ct-Horse"),
    ("db password env var", "s9Kx!t2Lq#W8zR4m"),
    ("api key in yaml", "f3b9c2e71d6a4058b7c1e2d3a4f5b6c7"),
    ("client secret in json", "Q~8xZ.k2Lm_9Np4Rt7Vw1Yb3Dc6Fh0Jj5"),
    ("generic token header", "tkn_8Fq2Lx9Wm4Rz7Kp3Vn6Bt1"),
    (
        "high-entropy hex signing key",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0c4d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5",
    ),
    ("high-entropy base64 seed", "Zm9vQmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZkdISUpLTE1O"),
    ("npm token", _join("npm_", "k7Lq2Wx9Mz4Rt8Vn3Bp6Yc1Df5Gh0Js2Ku8E")),
    ("npmrc auth token", _join("npm_", "Zp3Xw8Lq1Mr6Tk9Vb2Nc5Yd7Fg0Hj4Ks1Ue3Q")),
    (
        "azure storage account key",
        _join(
            "AccountKey=",
            "mN3oP5qR7sT9uV1wX3yZ5aB7cD9eF1gH3iJ5kL7mN9oP1qR3sT5uV7wX9yZ1aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5y",
            "==",
        ),
    ),
    ("google api key", _join("AIza", "SyD4mnemoLogFakeKey8Qx2Wz7Rt3Lp9Vn6B")),
    ("google oauth token", _join("ya29.", "a0AfB_byMnemoFakeOauthToken8x2Q7w")),
    (
        "sendgrid key",
        _join("SG.", "mnemoLogFakeKey1234567", ".", "Zq8Wm3Nx7Rk2Lp9Tv4Bc6Hd1Jf5Gs0Ka3Ee9Yu2Io7P"),
    ),
    ("twilio api key", _join("SK", "3c5e7a9b1d2f4e6a8c0b2d4f6a8e0c1b")),
    ("telegram bot token", _join("7123456789:", "AAF9mnemoLogFakeBotToken8x2Q7wZ4kLp")),
    ("mailchimp key", _join("0f1e2d3c4b5a69788796a5b4c3d2e1f0", "-us14")),
    ("square oauth secret", _join("sq0csp-", "mnemoLogFakeSquareSecret-8x2Q7wZ4kLp3Rt9Vn6B")),
]

_CONTEXT: dict[str, str] = {
    "aws secret access key": "aws_secret_access_key = {}",
    "postgres password": "DATABASE_URL=postgres://app_user:{}@db.internal:5432/app",
    "mysql password": "mysql://reporter:{}@mysql.prod.example.com:3306/sales",
    "mongodb password": "mongodb+srv://atlas_admin:{}@cluster0.abcde.mongodb.net/db",
    "redis password": "REDIS_URL=redis://default:{}@cache.internal:6379/0",
    "https basic auth password": "git clone https://deploy:{}@git.example.com/team/repo.git",
    "bearer token": "curl -H 'Authorization: Bearer {}' https://api.example.com/v1/me",
    "password assignment": "password={}",
    "db password env var": "export DB_PASSWORD='{}'",
    "api key in yaml": "api_key: {}",
    "client secret in json": '{{"client_id": "web-app", "client_secret": "{}"}}',
    "generic token header": "X-Auth-Token: {}",
    "high-entropy hex signing key": "WEBHOOK_SIGNING_KEY={}",
    "high-entropy base64 seed": "ENCRYPTION_SEED={}",
    "npmrc auth token": "//registry.npmjs.org/:_authToken={}",
    "azure storage account key": (
        "DefaultEndpointsProtocol=https;AccountName=mnemostore;{};EndpointSuffix=core.windows.net"
    ),
    "twilio api key": "TWILIO_KEY_SID={}",
}

BENIGN: list[str] = [
    "git checkout c8c252acd853de59c54b5c31374fec6028ee812e",
    "commit_hash: 02942347cadda24d3080fbfbc2d13295bb3a496d",
    "thread 019e1625-789d-76c0-80ab-3724b5ddb799 was updated",
    '"id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"',
    "edit /Users/Sample_User/repos/codemie-ai/codemie-code/src/utils/config.ts",
    "workdir=/home/user/project/src/components/settings_panel",
    "The tokenizer counts tokens; set max_output_tokens to 12000.",
    '"total_tokens": 14987, "cached_input_tokens": 7296',
    "See https://github.com/codemie-ai/codemie-code/pull/42 for details.",
    "postgres://localhost:5432/app has no password",
    "Please rotate the password policy document next week.",
    "sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "We fixed the flaky test by awaiting the socket before asserting.",
]


def planted(kind: str, value: str) -> str:
    """The text in which a secret of ``kind`` is planted."""
    return _CONTEXT.get(kind, "{}").format(value)


def _slots() -> list[tuple[str, str, str]]:
    """(where, kind, text): spread over user messages, tool-call arguments and tool outputs."""
    places = ("user", "call", "output")
    return [
        (places[index % 3], kind, planted(kind, value))
        for index, (kind, value) in enumerate(SECRETS)
    ]


def write_codex_rollout(folder: Path) -> Path:
    """Write a Codex rollout carrying every planted secret; return its path."""
    thread = "019c2222-3333-7444-8555-666677778888"
    path = folder / f"rollout-2026-03-02T10-00-00-{thread}.jsonl"
    lines: list[dict[str, object]] = [
        {
            "timestamp": "2026-03-02T10:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": thread,
                "timestamp": "2026-03-02T10:00:00.000Z",
                "cwd": "/srv/app",
                "cli_version": "0.130.0",
                "source": "cli",
            },
        }
    ]
    for number, (where, kind, text) in enumerate(_slots()):
        stamp = f"2026-03-02T10:{number // 60:02d}:{number % 60:02d}.000Z"
        call_id = f"call_{number}"
        if where == "user":
            payload: dict[str, object] = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"Use this for {kind}: {text}"}],
            }
            lines.append(
                {
                    "timestamp": stamp,
                    "type": "event_msg",
                    "payload": {"type": "user_message", "message": f"{kind}: {text}"},
                }
            )
        elif where == "call":
            payload = {
                "type": "function_call",
                "name": "exec_command",
                "call_id": call_id,
                "arguments": json.dumps({"cmd": f"echo '{text}' > .env", "workdir": "/srv/app"}),
            }
        else:
            payload = {
                "type": "function_call_output",
                "call_id": call_id,
                "output": json.dumps(
                    {"output": f"cat .env\n{text}\n", "metadata": {"exit_code": 0}}
                ),
            }
        lines.append({"timestamp": stamp, "type": "response_item", "payload": payload})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_claude_transcript(folder: Path) -> Path:
    """Write a Claude Code transcript carrying every planted secret; return its path."""
    session = "7a7a7a7a-1111-4222-8333-444455556666"
    path = folder / f"{session}.jsonl"
    base = {
        "sessionId": session,
        "cwd": "/srv/app",
        "gitBranch": "main",
        "version": "2.1.50",
        "isSidechain": False,
        "userType": "external",
    }
    lines: list[dict[str, object]] = []
    for number, (where, kind, text) in enumerate(_slots()):
        stamp = f"2026-03-02T11:{number // 60:02d}:{number % 60:02d}.000Z"
        tool_id = f"toolu_{number:04d}"
        if where == "user":
            record: dict[str, object] = {
                "type": "user",
                "message": {"role": "user", "content": f"Use this for {kind}: {text}"},
            }
        elif where == "call":
            record = {
                "type": "assistant",
                "message": {
                    "id": f"msg_{number}",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "Bash",
                            "input": {"command": f"echo '{text}' >> .env", "description": kind},
                        }
                    ],
                },
            }
        else:
            record = {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_id,
                            "content": f"cat .env\n{text}",
                        }
                    ],
                },
            }
        lines.append({**base, **record, "uuid": f"uuid-{number}", "timestamp": stamp})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# ------------------------------------------------------------------ the corpus in every location

VARIANTS = 5
"""Values per kind: the planted value and four of the same shape (``vary``)."""

_KEEP_PREFIX = re.compile(r"^(?:[A-Za-z0-9]{1,12}[_\-.=:]){1,3}")
_KEEP_SUFFIX = re.compile(r"-[a-z]{2}\d{1,2}$")  # a Mailchimp data-centre suffix


def _rotate(char: str, n: int) -> str:
    for low, high in (("0", "9"), ("a", "f"), ("g", "z"), ("A", "F"), ("G", "Z")):
        if low <= char <= high:
            span = ord(high) - ord(low) + 1
            return chr(ord(low) + (ord(char) - ord(low) + n) % span)
    return char


def vary(value: str, n: int) -> str:
    """Another made-up value of the same shape as ``value`` (n = 0: ``value`` itself).

    The token's prefix (``ghp_``, ``sk-ant-api03-``, up to the last ``/`` of
    a URL), a private key's armour lines and hex-ness are kept; the rest is
    rotated character by character within its class.
    """
    if n == 0:
        return value
    if "\n" in value:
        return "\n".join(line if line.startswith("-----") else vary(line, n) for line in value.split("\n"))
    if "://" in value:
        keep = value.rfind("/") + 1
    else:
        found = _KEEP_PREFIX.match(value)
        keep = max(4, found.end() if found else 0)
    tail = _KEEP_SUFFIX.search(value)
    end = tail.start() if tail else len(value)
    return value[:keep] + "".join(_rotate(c, n + i) for i, c in enumerate(value[keep:end])) + value[end:]


def corpus_values() -> list[tuple[str, str]]:
    """Every (kind, value) of the corpus: ``VARIANTS`` values of each kind in ``SECRETS``."""
    return [(kind, vary(value, n)) for n in range(VARIANTS) for kind, value in SECRETS]


TEXT_LOCATIONS = ("user", "assistant", "tool call", "tool output")
LOCATIONS = (*TEXT_LOCATIONS, "cwd", "file path", "git branch", "git remote", "tool name")
"""Everywhere a session can hold text: messages, tool calls and outputs, the working folder,
the session file's own path, the git branch and remote, and the name of a tool."""


def _fits(location: str, text: str, agent: str) -> bool:
    if location in TEXT_LOCATIONS:
        return True
    if "\n" in text or len(text) > 200:
        return False
    if location == "file path":
        return "/" not in text and len(text.encode()) < 200
    if location == "git remote":
        return agent == "codex" and not any(c in text for c in " /@")
    if location == "tool name":
        return " " not in text
    return True


def placements(values: list[tuple[str, str]] | None = None) -> list[tuple[str, str, str, str]]:
    """(kind, value, agent, location) for every value, spreading the values over every location and both agents."""
    chosen = corpus_values() if values is None else values
    out = []
    for index, (kind, value) in enumerate(chosen):
        agent = "codex" if index % 2 == 0 else "claude-code"
        text = planted(kind, value)
        for step in range(len(LOCATIONS)):
            location = LOCATIONS[(index + step) % len(LOCATIONS)]
            if _fits(location, text, agent):
                break
        out.append((kind, value, agent, location))
    return out


def write_planted_session(folder: Path, number: int, kind: str, value: str, agent: str, location: str) -> Path:
    """One session carrying ``value`` (as ``planted`` shows it) at ``location``; returns its path."""
    text = planted(kind, value)
    cwd = f"/home/dev/{text}/app" if location == "cwd" else "/home/dev/planted"
    branch = f"feature/{text}" if location == "git branch" else "main"
    tool = text if location == "tool name" else ("exec_command" if agent == "codex" else "Bash")
    said = {place: (text if location == place else f"nothing secret in the {place}") for place in TEXT_LOCATIONS}
    stamp = "2026-11-02T10:00:00.000Z"
    if agent == "codex":
        thread = f"019d{number:04x}-0000-7000-8000-{number:012x}"
        sub = folder / "codex" / (text if location == "file path" else "plain")
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"rollout-2026-11-02T10-00-00-{thread}.jsonl"
        git: dict[str, object] = {"branch": branch,
                                  "repository_url": f"https://ci:{text}@git.example.com/acme/planted.git"
                                  if location == "git remote" else "https://git.example.com/acme/planted.git"}
        lines: list[dict[str, object]] = [
            {"timestamp": stamp, "type": "session_meta",
             "payload": {"id": thread, "timestamp": stamp, "cwd": cwd, "source": "cli", "cli_version": "0.130.0", "git": git}},
            {"timestamp": stamp, "type": "event_msg", "payload": {"type": "user_message", "message": said["user"]}},
            {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": said["user"]}]}},
            {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "function_call", "name": tool, "call_id": "call_1",
                "arguments": json.dumps({"cmd": f"echo '{said['tool call']}'", "workdir": cwd})}},
            {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": "call_1",
                "output": json.dumps({"output": said["tool output"], "metadata": {"exit_code": 1}})}},
            {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": said["assistant"]}]}},
        ]
    else:
        session = f"7d{number:06x}-1111-4222-8333-{number:012x}"
        sub = folder / "claude" / (text if location == "file path" else "plain")
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"{session}.jsonl"
        base = {"sessionId": session, "cwd": cwd, "gitBranch": branch, "version": "2.1.50",
                "isSidechain": False, "userType": "external", "timestamp": stamp}
        lines = [
            {**base, "type": "user", "uuid": f"{number}-1", "message": {"role": "user", "content": said["user"]}},
            {**base, "type": "assistant", "uuid": f"{number}-2", "message": {"id": f"m{number}a", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {"command": f"echo '{said['tool call']}'"}}]}},
            {**base, "type": "user", "uuid": f"{number}-3", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": said["tool output"], "is_error": True}]}},
            {**base, "type": "assistant", "uuid": f"{number}-4", "message": {"id": f"m{number}b", "role": "assistant",
                                                                         "content": [{"type": "text", "text": said["assistant"]}]}},
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_planted_sessions(folder: Path, every: int = 1) -> list[tuple[str, str, str, str]]:
    """Write one session per placement (every ``every``-th of them); returns the placements written."""
    chosen = placements()[::every]
    for number, (kind, value, agent, location) in enumerate(chosen, start=1):
        write_planted_session(folder, number, kind, value, agent, location)
    return chosen
