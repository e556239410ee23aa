"""The Consolidation aggregate (one phase-2 run) and the lease that serialises runs."""

from __future__ import annotations

from collections.abc import Callable
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

        sealed: ClassVar[tuple[str, ...]] = ("error", "rejected.*.edit", "rejected.*.reason")  # may quote what the model wrote
        error: str
        rejected: tuple[Override, ...] = ()
        model: str = ""
        prompt_hash: str = ""

        def apply(self, aggregate: Any) -> None:
            """Mark failed."""
            aggregate.status = "failed"

    class EditsRejected(EventSourced.Event):
        """Code turned down some edits of one round's plan (each with its reason); the others may apply."""

        sealed: ClassVar[tuple[str, ...]] = ("rejected.*.edit", "rejected.*.reason")
        round: int
        proposed: int
        rejected: tuple[Override, ...]
        model: str = ""
        prompt_hash: str = ""

    class PlanRefused(EventSourced.Event):
        """Code refused one round's whole plan for what must never pass (a tombstoned value, a scope violation)."""

        sealed: ClassVar[tuple[str, ...]] = ("reason", "rejected.*.edit", "rejected.*.reason")
        round: int
        proposed: int
        reason: str
        rejected: tuple[Override, ...]
        model: str = ""
        prompt_hash: str = ""

    class RepairRequested(EventSourced.Event):
        """The model was handed its plan back with the reasons and asked to answer again."""

        sealed: ClassVar[tuple[str, ...]] = ("problems.*",)
        round: int
        problems: tuple[str, ...]

    class ModelFailed(EventSourced.Event):
        """One round's model call gave no plan (an error, an unparseable, cut-off or looping answer)."""

        sealed: ClassVar[tuple[str, ...]] = ("error",)
        round: int
        error: str
        model: str = ""

    class FellBack(EventSourced.Event):
        """No usable edit remained: the offline consolidator planned this run from the same inputs."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        reason: str
        consolidator: str

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

    def reject_edits(self, round: int, proposed: int, rejected: tuple[Override, ...], model: str = "", prompt_hash: str = "") -> None:
        """Record the edits of one round's plan code turned down."""
        self.trigger_event(self.EditsRejected, round=round, proposed=proposed, rejected=rejected, model=model, prompt_hash=prompt_hash)

    def refuse_plan(
        self, round: int, proposed: int, reason: str, rejected: tuple[Override, ...], model: str = "", prompt_hash: str = ""
    ) -> None:
        """Record that one round's whole plan was refused, and why."""
        self.trigger_event(
            self.PlanRefused, round=round, proposed=proposed, reason=reason, rejected=rejected, model=model, prompt_hash=prompt_hash
        )

    def request_repair(self, round: int, problems: tuple[str, ...]) -> None:
        """Record that the model was asked to repair its plan."""
        self.trigger_event(self.RepairRequested, round=round, problems=problems)

    def model_failed(self, round: int, error: str, model: str = "") -> None:
        """Record that one round's model call gave no plan."""
        self.trigger_event(self.ModelFailed, round=round, error=error, model=model)

    def fall_back(self, reason: str, consolidator: str) -> None:
        """Record that the offline consolidator planned the run."""
        self.trigger_event(self.FellBack, reason=reason, consolidator=consolidator)

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

    def take(
        self, consolidation_id: UUID, worker: str, now: datetime, ttl: timedelta, alive: Callable[[str], bool] = lambda _: True
    ) -> None:
        """Take the lease or raise ``LeaseHeld``; a holder ``alive`` says is gone (crashed) is taken over at once."""
        if self.holder is not None and self.holder[2] > now and alive(self.holder[1]):
            raise LeaseHeld(f"consolidation {self.holder[0]} by {self.holder[1]} is running")
        self.trigger_event(self.Taken, consolidation_id=consolidation_id, worker=worker, until=now + ttl)

    def release(self, consolidation_id: UUID) -> None:
        """Free the lease if this run holds it."""
        if self.holder is not None and self.holder[0] == consolidation_id:
            self.trigger_event(self.Released, consolidation_id=consolidation_id)
