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
    """One stored file: its original ``name``, its ``role`` (e.g. ``"run"``) and exact bytes;
    ``sha256``, when loaded from the store, is the hex SHA-256 of ``data`` (checked as it was read).
    Given when saving, it is trusted as the hex SHA-256 of ``data`` and the store does not hash the
    bytes again: give it only when it was computed from these very bytes (the dashboard hashes each
    upload once, when it arrives). Reading a file back always checks its bytes against the digest."""

    name: str
    data: bytes
    role: str = ""
    sha256: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class SavedAnalysis:
    """A stored analysis as loaded back.

    ``created`` and ``updated`` are UTC ISO 8601 times; ``expires`` is when an unused working
    copy will be removed (``None`` for snapshots, which are kept until deleted). ``revision``
    counts a working copy's changes (pass it back to ``update_working`` so that a change made
    meanwhile elsewhere is not overwritten); ``editable`` says whether the client that loaded
    it may change it (a working copy it created; never a snapshot).
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
    revision: int = 1
    editable: bool = False

    @property
    def read_only(self) -> bool:
        """Snapshots, and other clients' working copies, are read-only for the loader."""
        return not self.editable

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
    """Bytes stored (each distinct content once, plus every record: settings, titles, notes,
    file names), the quota and what can still be added; then the same for one client (its
    records and every content they use) against its share of the quota."""

    used_bytes: int
    quota_bytes: int
    free_bytes: int
    client_used_bytes: int = 0
    client_quota_bytes: int = 0
    client_free_bytes: int = 0
