"""mnemolog prompts layer: versioned prompt templates and a safe renderer.

Templates live next to this module as ``<name>.md``. Placeholders are written
``{{name}}`` and substituted in a single pass, so braces in session text (JSON,
code) are never interpreted and a value that itself contains ``{{x}}`` is not
expanded again. The SHA-256 of a template's text is recorded on every event a
model produced with it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = [
    "Prompt",
    "combined_hash",
    "load_prompt",
    "neutralise_tag",
    "placeholders",
    "render",
]

_NAME = re.compile(r"^[a-z0-9_]+$")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Prompt:
    """One prompt template: its name, its text and the SHA-256 (hex) of the text."""

    name: str
    text: str
    sha256: str


@lru_cache(maxsize=32)
def load_prompt(name: str) -> Prompt:
    """Read ``prompts/<name>.md`` from the installed package.

    Raises ``ValueError`` for a name that is not a plain identifier and
    ``FileNotFoundError`` when no such template exists.
    """
    if not _NAME.match(name):
        raise ValueError(f"invalid prompt name {name!r}: use lowercase letters, digits and '_'")
    resource = resources.files(__name__).joinpath(f"{name}.md")
    if not resource.is_file():
        raise FileNotFoundError(f"no prompt template named {name!r}")
    text = resource.read_text(encoding="utf-8")
    return Prompt(name=name, text=text, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


def placeholders(prompt: Prompt | str) -> frozenset[str]:
    """The placeholder names a template uses."""
    text = prompt.text if isinstance(prompt, Prompt) else prompt
    return frozenset(match.group(1) for match in _PLACEHOLDER.finditer(text))


def render(prompt: Prompt | str, **values: object) -> str:
    """Substitute every ``{{placeholder}}`` in one pass.

    Every placeholder must have a value and every value must be used, so a typo
    fails loudly instead of sending a half-filled prompt. Values are converted
    with ``str``; ``None`` renders as ``unknown``.
    """
    text = prompt.text if isinstance(prompt, Prompt) else prompt
    wanted = placeholders(text)
    missing = sorted(wanted - values.keys())
    unused = sorted(values.keys() - wanted)
    if missing:
        raise ValueError(f"missing values for placeholders: {', '.join(missing)}")
    if unused:
        raise ValueError(f"values for unknown placeholders: {', '.join(unused)}")

    def substitute(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        return "unknown" if value is None else str(value)

    return _PLACEHOLDER.sub(substitute, text)


def combined_hash(*prompts: Prompt) -> str:
    """SHA-256 over several templates (e.g. system + input), in the given order."""
    digest = hashlib.sha256()
    for prompt in prompts:
        digest.update(prompt.name.encode("utf-8"))
        digest.update(b"\0")
        digest.update(prompt.text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def neutralise_tag(text: str, tag: str) -> str:
    """Defuse any ``<tag>`` / ``</tag>`` inside data so it cannot close the data block early."""
    pattern = re.compile(rf"<(/?)\s*{re.escape(tag)}\s*>", re.IGNORECASE)
    return pattern.sub(lambda m: f"<{m.group(1)}{tag}_escaped>", text)
