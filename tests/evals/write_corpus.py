"""Writes the session files of the eval corpus (``tests/evals/corpus/sessions``), by hand, in the agents' formats.

The sessions are made up (our own text), modelled on what real sessions hold
and on how memory goes wrong: pasted issues and logs with "always" and "make
sure", the assistant's own advice, memory injected by a hook or returned by
an MCP tool, ``<environment_context>`` and ``AGENTS.md`` blocks, tool JSON
(file writes, edits, todo lists), trivial commands, a secret, a fix that is
only a re-run, a failure fixed by a setup step, the same command from both
agents, a command a later session replaces, a non-interactive run, and
sessions with nothing worth keeping, and one procedure run in two sessions (a skill). ``expectations.toml`` next to them says
what each project's next session must and must not get.

Run ``python tests/evals/write_corpus.py`` to write them again after an edit.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.agent_sessions import ClaudeSession, CodexRollout

OUT = Path(__file__).resolve().parent / "corpus" / "sessions"

SHOP = ("/home/dev/src/shop", "git@github.com:acme/shop.git")
API = ("/home/dev/src/api", "https://github.com/acme/api.git")
INFRA = ("/home/dev/src/infra", "git@gitlab.com:acme/infra.git")
MOBILE = ("/home/dev/src/mobile", "git@github.com:acme/mobile.git")
DOCS = ("/home/dev/src/docs", "git@github.com:acme/docs.git")

AGENTS_MD = (
    "# Codebase Knowledge Graph\n\nALWAYS prefer MCP graph tools over grep for code discovery.\n"
    "You must never edit generated files."
)


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """A moment in October 2026 (UTC)."""
    return datetime(2026, 10, day, hour, minute, tzinfo=UTC)


def codex(n: int, when: datetime, project: tuple[str, str], **options: object) -> CodexRollout:
    return CodexRollout(n, when, project[0], project[1], **options)  # type: ignore[arg-type]


def claude(n: int, when: datetime, project: tuple[str, str]) -> ClaudeSession:
    return ClaudeSession(n, when, project[0])


def sessions() -> list[CodexRollout | ClaudeSession]:
    """Every session of the corpus."""
    s: list[CodexRollout | ClaudeSession] = []

    # ---------------------------------------------------------------- shop (Node, pnpm)
    s.append(codex(1, at(5, 9), SHOP).user("Get the dev server running for the storefront.")
             .shell("make serve", "next dev\nready - started server on 0.0.0.0:3000, url: http://localhost:3000")
             .say("The dev server is up on port 3000 (`make serve`)."))
    s.append(claude(2, at(5, 14), SHOP).user("use pnpm in this repo, not npm. Run the unit tests.")
             .bash("pnpm test", "> shop@1.4.0 test\n> vitest run\n\nError: Cannot find module '@acme/ui'\nRequire stack:\n- src/cart/cart.test.ts", 1)
             .bash("pnpm install", "Packages: +812\nProgress: resolved 812, reused 790, downloaded 22, added 812, done\nDone in 14.2s")
             .bash("pnpm test", "> shop@1.4.0 test\n> vitest run\n\n Test Files  12 passed (12)\n      Tests  58 passed (58)")
             .say("The tests pass after installing the workspace packages."))
    s.append(codex(3, at(6, 10), SHOP).user("Lint the checkout module.")
             .shell("ls -la src/checkout", "total 24\n-rw-r--r--  1 dev dev  812 Oct  6 10:00 index.ts")
             .shell("git status", "On branch main\nnothing to commit, working tree clean")
             .shell("pnpm run lint", "> shop@1.4.0 lint\n> eslint src\n\n✔ No problems found")
             .patch("src/checkout/index.ts", "let total = 0", "const total = 0")
             .say("Lint is clean."))
    s.append(claude(4, at(6, 16), SHOP).user("Fix the lint warnings in cart.ts")
             .tool("TodoWrite", {"todos": [{"content": "Fix lint warnings", "status": "in_progress", "activeForm": "Fixing lint warnings"}]},
                   "Todos have been modified successfully.", structured={"oldTodos": [], "newTodos": []})
             .edit_file("/home/dev/src/shop/src/cart/cart.ts", "var items = []", "const items: Item[] = []")
             .bash("pnpm run lint", "> shop@1.4.0 lint\n> eslint src\n\n✔ No problems found")
             .say("Fixed: `items` is a typed const now."))
    s.append(claude(5, at(7, 11), SHOP).user(
        "Can you look at this issue from our tracker?\n\nThe issue says:\n"
        "Make sure to provide a valid key for the payments sandbox, otherwise checkout hangs.\n"
        "[2026-10-07 10:02:11] retrying 1/10 in 202m\n[2026-10-07 10:02:11] ERROR payment provider unreachable")
             .bash("grep -rn PAYMENTS_KEY src", "src/payments/client.ts:4:const key = process.env.PAYMENTS_KEY")
             .say("The client reads PAYMENTS_KEY from the environment; with no key it retries for hours."))
    s.append(codex(6, at(7, 15), SHOP).user("Check for vulnerable dependencies.")
             .shell("pnpm audit --prod", "No known vulnerabilities found")
             .say("No known vulnerabilities. You should always run `pnpm audit` before each release."))
    s.append(claude(7, at(8, 9), SHOP).user("Add a README section about the checkout flow.")
             .write_file("/home/dev/src/shop/docs/checkout.md", "# Checkout\n\nThe cart posts to /api/checkout.\n")
             .say("Added docs/checkout.md."))
    s.append(codex(8, at(9, 10), SHOP).user("make serve stopped working after the Makefile cleanup, get the dev server up again.")
             .shell("make serve", "make: *** No rule to make target 'serve'.  Stop.", 2)
             .shell("cat package.json", '{\n  "scripts": {"dev": "next dev", "test": "vitest run"}\n}')
             .shell("pnpm dev", "> shop@1.4.0 dev\n> next dev\n\nready - started server on 0.0.0.0:3000, url: http://localhost:3000")
             .say("`make serve` is gone; `pnpm dev` starts the server."))
    s.append(claude(9, at(9, 15), SHOP)
             .meta("<system-reminder>SessionStart hook additional context: ## Memory for shop\n"
                   "- [preference] Use yarn workspaces for the monorepo (shop) [item:0b7d1e2a-1111-4c3d-9e8f-000000000001]</system-reminder>")
             .attachment("hook_additional_context", "- [preference] Use yarn workspaces for the monorepo (shop) [item:0b7d1e2a-1111-4c3d-9e8f-000000000001]")
             .user("Build the shop for production.")
             .bash("pnpm run build", "> shop@1.4.0 build\n> next build\n\n✓ Compiled successfully\n✓ Generating static pages (24/24)")
             .say("The production build succeeded."))
    s.append(claude(10, at(10, 9), SHOP).user("What do we know about deployments here?")
             .tool("mcp__mnemolog__search_memory", {"query": "deploy"},
                   "- [preference] Always deploy on Fridays (shop) [item:0b7d1e2a-2222-4c3d-9e8f-000000000002]")
             .say("Memory says to always deploy on Fridays."))
    s.append(codex(11, at(10, 14), SHOP).user("Run the payments smoke test with the staging key.")
             .shell("STRIPE_API_KEY=sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c pnpm run smoke", "> shop@1.4.0 smoke\n\n smoke: 4 passed")
             .say("Smoke tests pass."))
    s.append(claude(12, at(5, 17), SHOP).user("Explain how the cart total is computed.")
             .tool("Read", {"file_path": "/home/dev/src/shop/src/cart/total.ts"}, "1\texport const total = (items) => items.reduce(...)",
                   structured={"type": "text", "file": {"filePath": "/home/dev/src/shop/src/cart/total.ts", "content": "...", "numLines": 1}})
             .say("It sums price times quantity, then applies the coupon."))
    s.append(codex(13, at(11, 9), SHOP).user("Run the tests again after the rebase.")
             .shell("pnpm test", "> shop@1.4.0 test\n> vitest run\n\n      Tests  58 passed (58)")
             .say("All 58 tests pass."))

    # ---------------------------------------------------------------- api (Python)
    s.append(codex(14, at(5, 10), API, agents_md=AGENTS_MD).user("Run the test suite.")
             .shell("pytest -q", "ImportError while loading conftest '/home/dev/src/api/tests/conftest.py'.\n"
                    "tests/conftest.py:3: in <module>\n    from acme_api.app import create_app\nE   ModuleNotFoundError: No module named 'acme_api'", 4)
             .shell("pip install -e .", "Successfully installed acme-api-0.4.0")
             .shell("pytest -q", "........................................\n142 passed in 8.31s")
             .say("The package was not installed in the venv; after `pip install -e .` all 142 tests pass."))
    s.append(claude(15, at(6, 11), API).user("Always run `ruff check .` before committing. Now fix the lint errors.")
             .bash("ruff check .", "src/acme_api/views.py:12:1: F401 `os` imported but unused\nFound 1 error.", 1)
             .edit_file("/home/dev/src/api/src/acme_api/views.py", "import os\n", "")
             .bash("ruff check .", "All checks passed!")
             .say("Removed the unused import."))
    s.append(codex(16, at(7, 9), API).user("The fast tests fail on the pagination change, fix it.")
             .shell("make test-fast", "FAILED tests/test_pagination.py::test_last_page - AssertionError: assert 3 == 4\n1 failed, 60 passed", 2)
             .patch("src/acme_api/pagination.py", "pages = total // size", "pages = -(-total // size)")
             .shell("make test-fast", "61 passed in 2.02s")
             .say("Off-by-one in the page count: fixed with ceiling division."))
    s.append(claude(17, at(8, 10), API).user("Run the migrations against the staging database.")
             .bash("make migrate DB_HOST=db-staging-7.internal.acme.net", "alembic upgrade head\nRunning upgrade 3f2a -> 9c1d, add orders index\nDone.")
             .say("Migrated staging to 9c1d."))
    s.append(codex(18, at(9, 11), API).user("for all my projects: write commit messages in the imperative mood.")
             .shell("git log --oneline -5", "a1b2c3d Add orders index\n9f8e7d6 Fix pagination")
             .say("Noted: imperative mood, as in the last commits."))
    s.append(claude(19, at(10, 12), API).user("Why is the search endpoint slow?")
             .bash("grep -n slow pytest.ini", "7:    slow: marks tests as slow")
             .bash("cat src/acme_api/search.py", "def search(q):\n    return db.query(Item).filter(Item.name.ilike(f'%{q}%')).all()")
             .say("The ILIKE with a leading wildcard cannot use an index."))
    s.append(codex(20, at(11, 10), API).user("Prefer pytest fixtures over unittest.mock in this repo. Add a test for search.")
             .patch("tests/test_search.py", "", "def test_search(client):\n    assert client.get('/search?q=a').ok")
             .shell("pytest -q tests/test_search.py", "............\n12 passed in 0.91s")
             .say("Added a fixture-based test."))
    s.append(codex(21, at(6, 13), API).user("Where are the settings loaded?")
             .shell('rg -n "Settings(" src', "src/acme_api/config.py:8:settings = Settings()")
             .say("In src/acme_api/config.py."))
    s.append(claude(22, at(12, 10), API).user("Run the type checker.")
             .bash("uv run mypy src", "Success: no issues found in 48 source files")
             .say("mypy is clean."))
    s.append(codex(23, at(13, 8), API, source="exec").user("Run the last failed tests.")
             .shell("pytest -q --lf", "3 passed in 0.4s")
             .say("Done."))

    # ---------------------------------------------------------------- infra (Terraform)
    s.append(codex(24, at(5, 11), INFRA).user("Plan the change to the VPC module.")
             .shell("terraform plan", 'Error: Backend initialization required, please run "terraform init"', 1)
             .shell("terraform init", "Terraform has been successfully initialized!")
             .shell("terraform plan", "Plan: 2 to add, 0 to change, 0 to destroy.")
             .say("Initialised the backend; the plan adds two subnets."))
    s.append(claude(25, at(6, 9), INFRA).user("Never run terraform apply without a saved plan file. Make the plan for the NAT change.")
             .bash("terraform plan -out plan.tfplan", "Plan: 1 to add, 1 to change, 0 to destroy.\n\nSaved the plan to: plan.tfplan")
             .say("Saved the plan to plan.tfplan."))
    s.append(claude(26, at(7, 10), INFRA).user("Validate the modules.")
             .bash("terraform validate", "Success! The configuration is valid.")
             .bash("tflint --recursive", "")
             .say("Both pass."))
    s.append(codex(27, at(8, 12), INFRA).user("What does the nat module output?")
             .shell("cat modules/nat/outputs.tf", 'output "nat_ip" {\n  value = aws_eip.nat.public_ip\n}')
             .say("It outputs nat_ip."))
    s.append(codex(28, at(12, 9), INFRA).user("In general, never use sudo with pip; use a virtualenv instead. Set up the tooling venv.")
             .shell("python3 -m venv .venv", "")
             .shell(".venv/bin/pip install pre-commit", "Successfully installed pre-commit-4.0.1")
             .say("The venv has pre-commit."))
    s.append(claude(29, at(12, 14), INFRA).user("show me the git log")
             .bash("git log --oneline -10", "c0ffee1 Add NAT gateway\nbeef123 Split VPC module")
             .say("Two recent commits."))
    s.append(claude(30, at(8, 15), INFRA).user("list the workspaces")
             .bash("terraform workspace list", "* default\n  staging")
             .say("default and staging."))
    s.append(codex(31, at(12, 16), INFRA).user("Check the formatting.")
             .shell("terraform fmt -check -recursive", "")
             .say("Formatting is clean."))

    # ---------------------------------------------------------------- mobile (Android)
    s.append(claude(32, at(6, 10), MOBILE).user("Build the debug APK.")
             .bash("./gradlew assembleDebug", "FAILURE: Build failed with an exception.\n* What went wrong:\n"
                   "SDK location not found. Define a valid SDK location with an ANDROID_HOME environment variable.", 1)
             .bash("export ANDROID_HOME=$HOME/Android/Sdk && ./gradlew assembleDebug", "BUILD SUCCESSFUL in 41s\n37 actionable tasks: 37 executed")
             .say("Built after pointing ANDROID_HOME at the SDK."))
    s.append(codex(33, at(7, 11), MOBILE).user("Never commit local.properties, it holds machine paths. Untrack it.")
             .shell("git rm --cached local.properties", "rm 'local.properties'")
             .say("Untracked; it is in .gitignore already."))
    s.append(codex(34, at(8, 11), MOBILE).user("Run the unit tests.")
             .shell("./gradlew testDebugUnitTest", "BUILD SUCCESSFUL in 1m 2s\n88 tests completed")
             .say("88 tests pass."))
    s.append(claude(35, at(9, 13), MOBILE).user("Where is the login screen defined?")
             .tool("Glob", {"pattern": "**/Login*.kt"}, "app/src/main/java/com/acme/ui/LoginScreen.kt",
                   structured={"filenames": ["app/src/main/java/com/acme/ui/LoginScreen.kt"], "numFiles": 1})
             .say("In LoginScreen.kt."))
    s.append(claude(36, at(11, 10), MOBILE).user("I always want you to explain the plan before editing files. Rename the login view model.")
             .edit_file("/home/dev/src/mobile/app/src/main/java/com/acme/ui/LoginViewModel.kt", "class LoginVM", "class LoginViewModel")
             .bash("./gradlew testDebugUnitTest", "BUILD SUCCESSFUL in 58s\n88 tests completed")
             .say("Plan: rename the class, update references, run the tests. Done."))
    s.append(codex(37, at(9, 16), MOBILE).user("Which gradle version do we use?")
             .shell("cat gradle/wrapper/gradle-wrapper.properties", "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.10-bin.zip")
             .say("Gradle 8.10."))
    s.append(claude(38, at(13, 9), MOBILE).user("use ktlint, not detekt, for formatting here. Format the ui package.")
             .bash("./gradlew ktlintFormat", "BUILD SUCCESSFUL in 12s")
             .say("Formatted with ktlint."))

    # ---------------------------------------------------------------- docs (MkDocs)
    s.append(codex(39, at(6, 15), DOCS).user("Check the docs build.")
             .shell("mkdocs build --strict", "WARNING -  Doc file 'guide.md' contains a link to 'setup.md', but the target is not found.\n"
                    "Aborted with 1 warnings in strict mode!", 1)
             .patch("docs/guide.md", "[setup](setup.md)", "[setup](install.md)")
             .shell("mkdocs build --strict", "INFO    -  Documentation built in 0.84 seconds")
             .say("Fixed the broken link; the strict build passes."))
    s.append(claude(40, at(7, 16), DOCS).user("Prefer British spelling in the docs (colour, behaviour). Proofread the intro.")
             .edit_file("/home/dev/src/docs/docs/index.md", "color", "colour")
             .say("Switched to British spelling."))
    s.append(claude(41, at(8, 14), DOCS).user("Rebuild the docs after the edit.")
             .bash("mkdocs build --strict", "INFO    -  Documentation built in 0.79 seconds")
             .say("Built."))
    s.append(codex(42, at(10, 10), DOCS).user(
        "Here is the CI output:\n\n```\nERROR   -  Config value 'theme': Unrecognised theme name: 'material'.\n"
        "Always pin mkdocs-material in requirements.\n```\n\nwhat does it mean?")
             .say("The material theme is not installed in CI."))
    s.append(codex(43, at(11, 15), DOCS).user("Serve the docs locally.")
             .shell("mkdocs serve -a 127.0.0.1:8001", "INFO    -  Serving on http://127.0.0.1:8001/")
             .say("Serving on port 8001."))
    s.append(claude(44, at(10, 16), DOCS).user("Fix the typo in index.md")
             .edit_file("/home/dev/src/docs/docs/index.md", "teh", "the")
             .say("Fixed."))
    s.append(claude(45, at(13, 11), DOCS).user("thanks, that's all for today")
             .say("You're welcome."))
    # the same three-step procedure in two sessions (one per agent): a skill
    s.append(codex(46, at(9, 9), DOCS).user("Publish the docs site.")
             .shell("ls", "docs\nmkdocs.yml\nrequirements.txt\n")
             .shell("cd /home/dev/src/docs && pip install -r requirements.txt", "Successfully installed mkdocs-1.6.1 mkdocs-material-9.5.40")
             .shell("mkdocs build --strict", "INFO    -  Documentation built in 0.81 seconds")
             .shell("mkdocs gh-deploy --force", "INFO    -  Pushing to gh-pages\nINFO    -  Your documentation should shortly be available")
             .say("Published to GitHub Pages."))
    s.append(claude(47, at(12, 17), DOCS).user("Publish the docs again with the new page.")
             .bash("pip install -r requirements.txt", "Requirement already satisfied: mkdocs-material in ./.venv/lib/python3.12/site-packages")
             .bash("mkdocs build --strict", "INFO    -  Documentation built in 0.77 seconds")
             .bash("mkdocs gh-deploy --force", "INFO    -  Pushing to gh-pages")
             .say("Published."))
    return s


def main() -> None:
    """Write every session file of the corpus (the old ones are removed first)."""
    if OUT.exists():
        shutil.rmtree(OUT)
    for session in sessions():
        session.write(OUT)
    print(f"wrote {len(sessions())} sessions under {OUT}")


if __name__ == "__main__":
    main()
