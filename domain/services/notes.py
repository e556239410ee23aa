"""Notes: a user's explicit request to remember or correct something, and taking it back.

A note is recorded once (``Note.Recorded``, secrets redacted and forgotten
values cut out first) and applied by the next consolidation, where it is
evidence for the items it asks for. Withdrawing a note (``Note.Withdrawn``)
keeps it out of every later run and takes its evidence away: the items that
rested on it alone retire at the next run. Forget requests are never notes:
they place a tombstone, so the value is never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID

from mnemolog.domain.note import Note
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.ports import Redactor
from mnemolog.domain.reads import MemoryReads
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.user_wide import is_user_wide

NOTE_INTENTS = ("remember", "correct")
DEFAULT_WITHDRAW_REASON = "withdrawn by the user"


class UnknownNote(LookupError):
    """No note has this id (or the prefix names none, or more than one)."""


@dataclass(frozen=True)
class NoteAdded:
    """The note a user left."""

    note_id: UUID
    intent: str
    scope: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"note": str(self.note_id), "intent": self.intent, "scope": self.scope}


def add_note(
    uow: UnitOfWork,
    text: str,
    intent: str,
    scope: str,
    redactor: Redactor,
    source: str = "cli",
    *,
    scope_chosen: bool = True,
) -> NoteAdded:
    """Record a remember/correct note for the next consolidation.

    ``scope`` is the note's project (or ``global``); when the user did not
    choose it (``scope_chosen=False``) and the note says it holds for every
    project ("for all my projects", "I always", ...: ``domain.user_wide``),
    the note is the user's own and is recorded global, so its item is
    user-wide. Secrets are redacted and forgotten values cut out before it is
    stored. Raises ValueError for an unknown intent or a note with no text.
    """
    if intent not in NOTE_INTENTS:
        raise ValueError(f"unknown note intent {intent!r} (expected one of {', '.join(NOTE_INTENTS)})")
    clean = redactor.redact(text)[0]
    clean = uow.matcher().scrub(clean, scope)[0].strip()
    if not clean:
        raise ValueError("a note needs some text")
    if not scope_chosen and is_user_wide(clean):
        scope = GLOBAL_SCOPE  # cut above as the project reads it: the project's forgotten values stay out too
    note = Note(text=clean, intent=intent, scope=scope, source=source, written_at=uow.clock())
    uow.app.save_all(note)
    return NoteAdded(note.id, intent, scope)


@dataclass(frozen=True)
class NoteWithdrawal:
    """A note taken back, and the items that leave memory at the next run because of it."""

    note_id: UUID
    already: bool  # it was withdrawn before: nothing changed
    items_leaving: tuple[UUID, ...]  # active items whose only live evidence is this note

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"note": str(self.note_id), "already": self.already, "items_leaving": [str(i) for i in self.items_leaving]}


def resolve_note(reads: MemoryReads, reference: str) -> UUID:
    """A note's id from its full id or an unambiguous prefix of it (as ``notes`` prints); raises UnknownNote."""
    wanted = reference.strip().lower()
    matches = [n for n in reads.note_ids() if str(n) == wanted or (len(wanted) >= 4 and str(n).startswith(wanted))]
    if len(matches) != 1:
        raise UnknownNote(reference)
    return matches[0]


def withdraw_note(uow: UnitOfWork, reference: str, reason: str = DEFAULT_WITHDRAW_REASON) -> NoteWithdrawal:
    """Withdraw one note (``Note.Withdrawn``); raises UnknownNote when no note has that id."""
    reads = uow.reads()
    note_id = resolve_note(reads, reference)
    note: Note = uow.app.repository.get(note_id)
    if not note.withdraw(reason or DEFAULT_WITHDRAW_REASON):
        return NoteWithdrawal(note_id, True, ())
    uow.app.save_all(note)
    live = (reads.live_session_ids() | reads.live_note_ids()) - {note_id}
    leaving = tuple(
        i.item_id for i in reads.active_items() if note_id in i.evidence and not any(e in live for e in i.evidence)
    )
    return NoteWithdrawal(note_id, False, leaving)


# ------------------------------------------------------------------ Codex's notes files


@dataclass(frozen=True)
class NoteFile:
    """One file of Codex's ad-hoc notes folder, as read (or why it could not be)."""

    source: str  # its path inside the memory folder: the note's source, so a file is imported once
    text: str | None
    problem: str = ""


class NoteFiles(Protocol):
    """Codex's ad-hoc notes (``extensions/ad_hoc/notes/*.md`` in the memory folder)."""

    def note_files(self) -> list[NoteFile]:
        """Every notes file, sorted by name (empty when the folder does not exist)."""
        ...


_FRONT_INTENT = re.compile(r"^\s*(?:intent|type|kind)\s*:\s*(\w+)", re.IGNORECASE | re.MULTILINE)
_LEAD_WORD = re.compile(r"^\W*(remember|correct|correction|forget)\b", re.IGNORECASE)


def note_file_intent(text: str) -> str:
    """remember | correct | forget, from front matter (``intent: correct``) or the first word."""
    found = _FRONT_INTENT.search(text[:500]) or _LEAD_WORD.search(text)
    word = found.group(1).lower() if found else "remember"
    return {"correction": "correct"}.get(word, word if word in ("remember", "correct", "forget") else "remember")


@dataclass
class NoteImport:
    """What importing a notes folder did."""

    imported: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"imported": list(self.imported), "already": list(self.already), "skipped": list(self.skipped)}


def import_note_files(uow: UnitOfWork, files: NoteFiles, redactor: Redactor, scope: str = GLOBAL_SCOPE) -> NoteImport:
    """Record Codex's ad-hoc notes files as notes, once each (a file is known by its path in the folder).

    A forget request in a file is not stored as a note (that would store the
    value): it is skipped and reported, to be done with ``mnemolog forget``.
    """
    report = NoteImport()
    found = files.note_files()
    if not found:
        return report
    seen = uow.reads().note_sources()
    for file in found:
        if file.text is None:
            report.skipped.append({"file": file.source, "reason": file.problem or "unreadable"})
            continue
        if file.source in seen:
            report.already.append(file.source)
            continue
        intent = note_file_intent(file.text)
        if intent == "forget":
            report.skipped.append({"file": file.source, "reason": "a forget request: run `mnemolog forget` instead"})
            continue
        if not file.text.strip():
            report.skipped.append({"file": file.source, "reason": "empty"})
            continue
        try:
            add_note(uow, file.text, intent, scope, redactor, source=file.source)
        except ValueError as error:  # nothing left once secrets and forgotten values are cut out
            report.skipped.append({"file": file.source, "reason": str(error)})
            continue
        seen.add(file.source)
        report.imported.append(file.source)
    return report
