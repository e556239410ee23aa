"""A scripted model that answers mnemolog's own schemas (stage 1, the plan), for the model-backend tests.

``answer_for(schema, text)``: the stage-1 memory of a session stating ``make
lint-zz8`` before every push, or a plan adding that rule with the session's
id and scope read from the prompt (after ``MODEL_CALL_MARKER`` when it is
there); ``None`` for any other schema.
"""

from __future__ import annotations

import re
from typing import Any

from mnemolog.domain.model_calls import MODEL_CALL_MARKER

RULE = "Always run make lint-zz8 before you push anything."
RULE_ITEM = "Run `make lint-zz8` before every push."


def answer_for(schema: dict[str, Any], text: str) -> dict[str, Any] | None:
    """What a model that follows the prompt answers for ``schema`` (JSON schema) given the prompt ``text``."""
    properties = schema.get("properties", {})
    if "rollout_summary" in properties:
        memory = ("---\ndescription: lint rule\ntask: set the lint rule\ntask_group: alpha\ntask_outcome: success\n"
                  "keywords: lint\n---\n### Task 1\nPreference signals:\n- The user wants `make lint-zz8` before every push.\n")
        return {"rollout_summary": "The user set a lint rule.", "rollout_slug": "lint-rule", "raw_memory": memory}
    if "edits" in properties:
        inputs = text.replace("\\n", "\n").split(MODEL_CALL_MARKER)[-1].partition("\n## session ")[2]
        session = re.search(r"session id: ([^\s\"\\]+)", inputs)
        scope = re.search(r"\nscope: ([^\s\"\\]+)", inputs)
        if not (session and scope):
            return {"edits": [], "user_profile": ""}
        # Every field, as a strict schema wants (Claude Code checks its StructuredOutput call against it).
        edit = {"op": "add", "target": None, "kind": "preference", "scope": scope.group(1), "task_group": "alpha",
                "valid_from": None, "skill": None, "title": "Lint before push", "text": RULE_ITEM, "keywords": ["lint"],
                "evidence": [session.group(1)], "reason": "the user said so"}
        return {"edits": [edit], "user_profile": ""}
    if "status" in properties and "words" in properties:  # doctor --model's probe
        return {"status": "ready", "words": 4}
    return None
