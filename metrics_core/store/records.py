"""What the store hands back: files, analyses, snapshot receipts and usage figures."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["WORKING", "SNAPSHOT", "SavedFile", "SavedAnalysis", "SnapshotReceipt", "StoreUsage"]

#: ``SavedAnalysis.kind`` of a mutable working copy.
WORKING = "working"
#: ``SavedAnalysis.kind`` of a read-only snapshot.
SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class SavedFile:
    """One stored file: its original ``name``, its ``role`` (e.g. ``"run"``) and exact bytes."""

    name: str
    data: bytes
    role: str = ""


@dataclass(frozen=True)
class SavedAnalysis:
    """A stored analysis as loaded back.

    ``created`` and ``updated`` are UTC ISO 8601 times; ``expires`` is when an unused working
    copy will be removed (``None`` for snapshots, which are kept until deleted).
    """

    id: str
    created: str
    settings: dict = field(default_factory=dict)
    files: tuple[SavedFile, ...] = ()
    title: str = ""
    notes: str = ""
    kind: str = SNAPSHOT
    updated: str = ""
    expires: str | None = None

    @property
    def read_only(self) -> bool:
        """Snapshots are read-only; working copies change as the user works."""
        return self.kind == SNAPSHOT

    def files_with_role(self, role: str) -> list[SavedFile]:
        return [f for f in self.files if f.role == role]


@dataclass(frozen=True)
class SnapshotReceipt:
    """A new snapshot's id and its delete token. The token is shown to the user once: the
    store keeps only its hash and can never tell it again."""

    id: str
    delete_token: str


@dataclass(frozen=True)
class StoreUsage:
    """Bytes of distinct content stored, the quota, and what can still be added."""

    used_bytes: int
    quota_bytes: int
    free_bytes: int
