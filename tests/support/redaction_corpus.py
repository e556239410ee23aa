"""A large, deterministic corpus of synthetic texts for checking that redaction detects exactly what it did.

``texts()`` builds the same list of texts on every run (a seeded
``random.Random``; nothing read from disk): every planted secret of
``support.secrets_corpus`` in its context and in variants (upper and lower
case, cut short, glued to word characters, quoted, inside JSON and inside
JSON inside a JSON string, spaced and tabbed around ``=`` and ``:``), lines
shaped like what sessions hold (shell output, code, JSON records, paths,
URLs, hashes, ids, base64 blobs, assignments), and random mixes of all of
these with every literal a rule is anchored on and look-alike characters
(``İ``, ``ı``, ``ſ``, the Kelvin sign).

``tests/unit/data/redaction_spans.json`` holds the spans the redaction of
2026-12-01 (before its rules were anchored on their literals) found in each
text; ``tests/unit/test_redaction_spans.py`` checks the current redaction
finds exactly those. Change nothing here without re-recording that file from
the same implementation (``python -m support.redaction_corpus --record``).
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from pathlib import Path

from support.secrets_corpus import SECRETS, corpus_values, planted

SEED = 20261201
RECORD = Path(__file__).resolve().parents[1] / "unit" / "data" / "redaction_spans.json"

_KEYWORDS = (
    "api_key", "apikey", "api-key", "API_KEY", "access_key", "accessKey", "secret", "SECRET", "client_secret",
    "token", "Token", "TOKEN", "auth_token", "_authToken", "passwd", "password", "Password", "PASSWORD", "passphrase",
    "pwd", "credentials", "credential", "auth_key", "private_key", "privkey", "session_key", "service_key",
    "account_key", "db_key", "database_password", "db_pass", "key_pass", "contraseña", "contrasena", "signing",
    "hmac", "salt", "key", "KEY", "pass", "cloudant_password", "cl_key", "ibm_cloud_iam_api_key", "softlayer_api_key",
    "sl_token", "ibm_cos_hmac_secret_access_key", "aws_secret_access_key", "AWS_SECRET", "aws_pass", "github_token",
    "DB_PASSWORD", "WEBHOOK_SIGNING_KEY", "ENCRYPTION_SEED", "X-Auth-Token", "tokenizer", "max_output_tokens",
    "total_tokens", "commit_id", "sha256", "digest", "etag", "nonce", "userId", "requestIds", "uuid", "hash",
)
_LITERALS = (
    "sk-", "sk-proj-", "sk-ant-api03-", "AKIA", "ASIA", "ABIA", "ACCA", "A3T", "AKC", "AP", "AC", "SK", "Bearer ",
    "bearer ", "BEARER ", "eyJ", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "gh", "glpat-", "gldt-",
    "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "GR1348941", "gl", "npm_", "AIza", "ya29.", "xoxb-", "xoxp-",
    "xox", "sk_live_", "rk_live_", "sk_test_", "rk_test_", "://", "https://", "postgres://", "mongodb+srv://",
    "@", ":", "=", ":=", "=>", "::", "-us", "-us14", "T3BlbkFJ", "pypi-AgEIcHlwaS5vcmc", "SG.", "sq0csp-",
    "AccountKey=", "/:_authToken=", "//registry.npmjs.org/:_authToken=", "https://hooks.slack.com/services/T",
    ".cloudant.com", "api.softlayer.com/soap/v3/", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----", "PRIVATE KEY", "PuTTY-User-Key-File-2: ", "Private-MAC: ", "[REDACTED_SECRET]",
    "\\\"", "\\", '"', "'", "`", " ", "\t", "\n", ",", ";", "{", "}", "[", "]", "(", ")", "<", ">", "/", ".", "-", "_",
    "+", "~", "$", "${", "!", "==", "!==", "İ", "ı", "ſ", "\u212a", "é", "ß", "→",
)
_SHAPES = (
    "total 76\ndrwxr-xr-x 15 root root   480 Dec 18 14:31 .\n-rw-------  1 root root  5832 Dec 12 11:00 README.md",
    "git checkout c8c252acd853de59c54b5c31374fec6028ee812e",
    "commit_hash: 02942347cadda24d3080fbfbc2d13295bb3a496d",
    '"id": "a1b2c3d4-e5f6-7890-abcd-ef1234567890"',
    "edit /Users/Sample_User/repos/codemie-ai/codemie-code/src/utils/config.ts",
    "workdir=/home/user/project/src/components/settings_panel",
    "The tokenizer counts tokens; set max_output_tokens to 12000.",
    '"total_tokens": 14987, "cached_input_tokens": 7296',
    "See https://github.com/codemie-ai/codemie-code/pull/42 for details.",
    "postgres://localhost:5432/app has no password",
    "sha256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    '{"command": "ls -la", "description": "List files and directories in current directory"}',
    '{"file_path": "/workspace/hello_world.py", "content": "print(\\"Hello, World!\\")\\n"}',
    "     1→import os\n     2→API_KEY = os.environ[\"API_KEY\"]\n     3→",
    "Exit code 1\ncat: nonexistent.txt: No such file or directory",
    "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'password'",
    "const token = process.env.GITHUB_TOKEN;\nif (!token) throw new Error('no token');",
    "export PATH=/usr/local/bin:$PATH\nexport NODE_OPTIONS=--max-old-space-size=4096",
    "integrity sha512-Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==",
    "resolved \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz#679591c564c3bffaae8454cf0b3df370c3d6911c\"",
    "docker run -e PASSWORD=changeme -e DB_HOST=db.internal:5432 image:latest",
    "url = git@github.com:codemie-ai/codemie-code.git\nfetch = +refs/heads/*:refs/remotes/origin/*",
    "2026-01-02T19:11:04.512Z INFO request_id=01HZX3K9M2N4P6Q8R0S2T4V6W8 status=200 took=12ms",
    "if (password === 'hunter2') { login(); }",
    "'changeme' == password and `supersecretvalue1` !== api_key",
    "headers: {Authorization: `Bearer ${token}`}",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDmnemologfakekeymaterialonlyfortests user@host",
    "<environment_context>\n  <cwd>/home/dev/src/api</cwd>\n</environment_context>",
)
_VALUE_CHARS = string.ascii_letters + string.digits
_EXTRA_VALUE_CHARS = "+/_.-=~!#$%"


def _value(rng: random.Random) -> str:
    """A random value: hex, base64-like, lower only, mixed; of a length near the rules' limits."""
    length = rng.choice((6, 8, 12, 15, 16, 19, 20, 21, 24, 30, 32, 35, 36, 40, 43, 64, 88, 90))
    kind = rng.randrange(6)
    if kind == 0:
        alphabet = "0123456789abcdef"
    elif kind == 1:
        alphabet = _VALUE_CHARS + "+/"
    elif kind == 2:
        alphabet = string.ascii_lowercase
    elif kind == 3:
        alphabet = string.ascii_uppercase + string.digits
    elif kind == 4:
        alphabet = _VALUE_CHARS + _EXTRA_VALUE_CHARS
    else:
        alphabet = _VALUE_CHARS
    return "".join(rng.choice(alphabet) for _ in range(length))


def _variants(text: str, value: str, rng: random.Random) -> list[str]:
    cut = max(1, len(value) - rng.randrange(1, 6))
    glued = rng.choice(string.ascii_letters + string.digits + "_")
    return [
        text,
        text.upper(),
        text.lower(),
        f"Here is the setting you asked for:\n{text}\nThanks!",
        text.replace(value, value[:cut]),
        text.replace(value, value + glued),
        glued + text,
        text + glued,
        f'"{text}"',
        f"'{text}'",
        json.dumps({"output": text, "metadata": {"exit_code": 1}}),
        json.dumps({"cmd": json.dumps({"value": text, "note": "x"})}),
        text.replace("=", " = ").replace(": ", ":\t"),
        text.replace("\n", "\\n"),
        " ".join([text] * 2),
    ]


def _mix(rng: random.Random, values: list[str], planted_texts: list[str]) -> str:
    parts: list[str] = []
    for _ in range(rng.randrange(2, 24)):
        pick = rng.randrange(10)
        if pick < 3:
            parts.append(rng.choice(_LITERALS))
        elif pick < 5:
            parts.append(rng.choice(_KEYWORDS))
        elif pick < 7:
            parts.append(_value(rng))
        elif pick == 7:
            parts.append(rng.choice(values))
        elif pick == 8:
            parts.append(rng.choice(_SHAPES))
        else:
            parts.append(rng.choice(planted_texts))
    joiner = rng.choice(("", "", " ", "\n", "=", ": ", '"', "\\\""))
    return joiner.join(parts)


def _assignment(rng: random.Random) -> str:
    name = rng.choice(_KEYWORDS) if rng.random() < 0.5 else "".join(
        rng.choice(string.ascii_letters + "_.-" + string.digits) for _ in range(rng.randrange(1, 70))
    )
    operator = rng.choice(("=", ":", ":=", "=>", " = ", ": ", "\t=\t", '": "', "='", ' ', "::"))
    quote = rng.choice(("", "", '"', "'"))
    before = rng.choice(("", " ", "export ", "\n", "{", '"', "$", "x", "-"))
    after = rng.choice(("", " ", "\n", '"', "'", ",", "/rest/of/path", "=", ".", "-tail"))
    return f"{before}{name}{quote}{operator}{quote}{_value(rng)}{after}"


def texts() -> list[str]:
    """Every text of the corpus, in a fixed order."""
    rng = random.Random(SEED)
    values = [value for _, value in corpus_values()]
    planted_texts = [planted(kind, value) for kind, value in corpus_values()]
    out: list[str] = list(planted_texts)
    for kind, value in SECRETS:
        out += _variants(planted(kind, value), value, rng)
    out += list(_SHAPES)
    out += [_assignment(rng) for _ in range(6000)]
    out += [_mix(rng, values, planted_texts) for _ in range(8000)]
    # Runs of one literal and long texts (many anchors in one text, windows that merge).
    out += ["".join(rng.choice(_LITERALS[:40]) + _value(rng) for _ in range(60)) for _ in range(40)]
    out += ["\n".join(_mix(rng, values, planted_texts) for _ in range(40)) for _ in range(40)]
    return out


def digest(corpus: list[str]) -> str:
    """A hash of the corpus, to tell that it is still the one the spans were recorded on."""
    return hashlib.sha256("\0".join(corpus).encode("utf-8", "surrogatepass")).hexdigest()


def _leaves(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return []


def fixture_texts(path: Path) -> list[str]:
    """Texts of a real session file: what ingest redacts in it, every line, every string in it, and each line
    with a planted secret in it.

    Only a digest of the spans found in them is recorded (``fixture_digest``),
    never the texts: the session files stay outside the repository.
    """
    from mnemolog.adapters.redaction import ITEM_FIELDS, META_FIELDS
    from mnemolog.adapters.session_files import read_session

    rng = random.Random(path.name)
    planted_texts = [planted(kind, value) for kind, value in SECRETS]
    transcript = read_session(path)
    out: list[str] = [str(getattr(transcript.meta, name) or "") for name in META_FIELDS]
    out += [str(getattr(item, name) or "") for item in transcript.items for name in ITEM_FIELDS]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        out.append(line)
        out += _leaves(json.loads(line))
        cut = rng.randrange(len(line) + 1)
        out.append(line[:cut] + rng.choice(planted_texts) + line[cut:])
    return out


def fixture_digest(spans: list[list[tuple[int, int]]]) -> str:
    """A hash of the spans found in a fixture's texts."""
    return hashlib.sha256(json.dumps(spans).encode()).hexdigest()


def fixture_files() -> list[Path]:
    """The real session files (``../shared/fixtures``), sorted."""
    from support.shared_fixtures import SHARED

    return sorted(p for p in SHARED.rglob("*.jsonl") if p.is_file())


def _record() -> None:  # pragma: no cover - run by hand, from the implementation being recorded
    from mnemolog.adapters.redaction import secret_spans

    corpus = texts()
    spans = {str(i): [list(span) for span in secret_spans(text)] for i, text in enumerate(corpus)}
    fixtures = {}
    for path in fixture_files():
        found = [[tuple(span) for span in secret_spans(text)] for text in fixture_texts(path)]
        fixtures[f"{path.parent.name}/{path.name}"] = {
            "bytes_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "texts": len(found),
            "spans": sum(map(len, found)),
            "digest": fixture_digest(found),
        }
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(
        json.dumps(
            {
                "texts": len(corpus),
                "digest": digest(corpus),
                "fixtures": fixtures,
                "spans": {k: v for k, v in spans.items() if v},
            },
            separators=(",", ":"),
        )
        + "\n"
    )


if __name__ == "__main__":  # pragma: no cover
    import sys

    if "--record" in sys.argv:
        _record()
