"""The Consolidation aggregate (one phase-2 run) and the lease that serialises runs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced, Value


class SelectedInput(Value):
    """One selected extraction, with the version it had and its rank."""

    session_id: UUID
    content_hash: str
    rank: int


class InputDiff(Value):
    """What changed in the selection since the last completed run."""

    added: tuple[UUID, ...] = ()
    changed: tuple[UUID, ...] = ()
    removed: tuple[UUID, ...] = ()


class Override(Value):
    """Something code did or refused that the model did not ask for."""

    action: str  # "retired" | "rejected" | "suppressed"
    reason: str
    item_id: UUID | None = None
    edit: str = ""  # a short description of the edit (never a tombstoned value)


class Consolidation(EventSourced):
    """One phase-2 run: its inputs, and how it ended."""

    class Started(EventSourced.Created):
        """The run began with this selection."""

        selection: tuple[SelectedInput, ...]
        previous_selection: tuple[SelectedInput, ...]
        diff: InputDiff
        worker: str
        model: str

    class Completed(EventSourced.Event):
        """The run's edits were applied (saved in the same transaction)."""

        sealed: ClassVar[tuple[str, ...]] = ("user_profile",)
        added: int
        revised: int
        retired: int
        invalidated: int
        overrides: tuple[Override, ...]
        model: str
        prompt_hash: str
        input_tokens: int = 0
        output_tokens: int = 0
        user_profile: str = ""
        notes_applied: tuple[UUID, ...] = ()
        redactions: int = 0  # secrets cut out of what the model wrote

        def apply(self, aggregate: Any) -> None:
            """Mark completed."""
            aggregate.status = "completed"
            aggregate.user_profile = self.user_profile

    class Failed(EventSourced.Event):
        """Nothing of the run was applied."""

        sealed: ClassVar[tuple[str, ...]] = ("error",)  # a model's error may quote what it wrote
        error: str
        rejected: tuple[Override, ...] = ()
        model: str = ""
        prompt_hash: str = ""

        def apply(self, aggregate: Any) -> None:
            """Mark failed."""
            aggregate.status = "failed"

    class ProfileScrubbed(EventSourced.Event):
        """Tombstoned values were cut out of the run's user profile."""

        sealed: ClassVar[tuple[str, ...]] = ("user_profile",)
        tombstone_ids: tuple[UUID, ...]
        user_profile: str

        def apply(self, aggregate: Any) -> None:
            """Replace the profile."""
            aggregate.user_profile = self.user_profile

    class Rerecorded(EventSourced.Event):
        """The run's user profile, recorded again under a new data key (an erase destroyed the old keys)."""

        sealed: ClassVar[tuple[str, ...]] = ("user_profile",)
        user_profile: str

        def apply(self, aggregate: Any) -> None:
            """The profile as it stood when re-recorded."""
            aggregate.user_profile = self.user_profile

    @event(Started)
    def __init__(
        self,
        selection: tuple[SelectedInput, ...],
        previous_selection: tuple[SelectedInput, ...],
        diff: InputDiff,
        worker: str,
        model: str,
    ) -> None:
        self.selection = selection
        self.previous_selection = previous_selection
        self.diff = diff
        self.worker = worker
        self.model = model
        self.status = "running"
        self.user_profile = ""

    def complete(self, **fields: Any) -> None:
        """Record the run's outcome."""
        self.trigger_event(self.Completed, **fields)

    def scrub_profile(self, matcher: Any) -> bool:
        """Cut tombstoned values (of any scope: the profile is read everywhere) out of the profile."""
        profile, hits = matcher.scrub(self.user_profile, None)  # the profile is read in every project
        if not hits:
            return False
        self.trigger_event(self.ProfileScrubbed, tombstone_ids=hits, user_profile=profile)
        return True

    def rerecord(self, matcher: Any) -> None:
        """Record the profile again, ``matcher``'s values cut out (an erase: under a new key)."""
        self.trigger_event(self.Rerecorded, user_profile=matcher.scrub(self.user_profile, None)[0])

    def fail(self, error: str, rejected: tuple[Override, ...] = (), model: str = "", prompt_hash: str = "") -> None:
        """Record that nothing was applied."""
        self.trigger_event(self.Failed, error=error, rejected=rejected, model=model, prompt_hash=prompt_hash)


PHASE_TWO_LEASE_ID = uuid5(NAMESPACE_URL, "mnemolog:phase-two-lease")


class LeaseHeld(Exception):
    """Another consolidation is running."""


class PhaseTwoLease(EventSourced):
    """A single aggregate that serialises consolidation runs across processes.

    Taking it is an event: two runs that take it at once conflict on its version,
    and the loser exits. Saving the run's outcome together with the release
    conflicts too if the lease was taken over meanwhile.
    """

    class Opened(EventSourced.Created):
        """The lease exists."""

    class Taken(EventSourced.Event):
        """A run holds the lease until ``until``."""

        consolidation_id: UUID
        worker: str
        until: datetime

        def apply(self, aggregate: Any) -> None:
            """Hold."""
            aggregate.holder = (self.consolidation_id, self.worker, self.until)

    class Released(EventSourced.Event):
        """The run ended."""

        consolidation_id: UUID

        def apply(self, aggregate: Any) -> None:
            """Free."""
            aggregate.holder = None

    @event(Opened)
    def __init__(self) -> None:
        self.holder: tuple[UUID, str, datetime] | None = None

    @classmethod
    def create_id(cls) -> UUID:
        """There is one lease per store."""
        return PHASE_TWO_LEASE_ID

    def take(self, consolidation_id: UUID, worker: str, now: datetime, ttl: timedelta) -> None:
        """Take the lease or raise ``LeaseHeld``."""
        if self.holder is not None and self.holder[2] > now:
            raise LeaseHeld(f"consolidation {self.holder[0]} by {self.holder[1]} is running")
        self.trigger_event(self.Taken, consolidation_id=consolidation_id, worker=worker, until=now + ttl)

    def release(self, consolidation_id: UUID) -> None:
        """Free the lease if this run holds it."""
        if self.holder is not None and self.holder[0] == consolidation_id:
            self.trigger_event(self.Released, consolidation_id=consolidation_id)
