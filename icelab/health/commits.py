"""The commits that landed on a table while `--apply` ran: the doctor's own rewrite, and the
other writers' commits before and after it.

The doctor judges its rewrite on its own commit: the state after is the rewrite's snapshot, the
state before is the rewrite's parent. A writer's append between the doctor's first read and the
rewrite is then in both, and one after the rewrite in neither, so neither moves the verdict.

Which commit is the doctor's: the `replace` commit whose summary counts replaced manifests
(what `rewrite_manifests` writes), committed while the doctor's rewrite statement ran. Iceberg
retries a commit that lost a race (`commit.retry.num-retries`, 4 by default) on the new base:
an append never conflicts with a manifest rewrite, so the retried rewrite lands after it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from icelab.core.units import plural

REWRITE_SUMMARY_KEY = "manifests-replaced"  # RewriteManifests' summary names what it replaced
SHOWN_SUMMARY = ("added-data-files", "deleted-data-files", "added-records", "manifests-created")


@dataclass
class Commit:
    """One snapshot committed on the table."""

    snapshot_id: int
    parent_id: int | None
    operation: str
    committed_ms: int
    summary: dict[str, str] = field(default_factory=dict)

    @property
    def rewrite(self) -> bool:
        """Whether it is a manifest rewrite (`rewrite_manifests`' commit)."""
        return self.operation == "replace" and REWRITE_SUMMARY_KEY in self.summary

    def as_json(self) -> dict[str, Any]:
        shown = {k: self.summary[k] for k in SHOWN_SUMMARY if k in self.summary}
        return asdict(self) | {"summary": shown}

    def text(self) -> str:
        """`5123 append (+3 data files, +300 records)`."""
        added = [
            f"+{plural(int(self.summary[k]), noun)}"
            for k, noun in (("added-data-files", "data file"), ("added-records", "record"))
            if k in self.summary
        ]
        return f"{self.snapshot_id} {self.operation}" + (f" ({', '.join(added)})" if added else "")


@dataclass
class Interleaved:
    """The commits since the doctor's first read, split around its own rewrite."""

    since: int | None  # the snapshot the first report was read at
    ours: Commit | None  # the doctor's rewrite commit (None: it committed none)
    before: list[Commit]  # other writers' commits between `since` and the rewrite
    after: list[Commit]  # other writers' commits after the rewrite (or all, without one)
    complete: bool = True  # False: the walk back from the current snapshot never met `since`

    @property
    def others(self) -> list[Commit]:
        return [*self.before, *self.after]

    def as_json(self) -> dict[str, Any]:
        return {
            "since_snapshot_id": self.since,
            "rewrite": self.ours.as_json() if self.ours else None,
            "others_before_rewrite": [c.as_json() for c in self.before],
            "others_after_rewrite": [c.as_json() for c in self.after],
            "complete": self.complete,
        }

    def lines(self) -> list[str]:
        """What the console says about the commits, from one line when no one else wrote."""
        if not self.others:
            head = "no other writer committed while --apply ran"
            return [
                f"  commits        {head}"
                + (f"; the rewrite is {self.ours.snapshot_id}" if self.ours else "")
            ]
        out = [f"  commits        {plural(len(self.others), 'commit')} by other writers while --apply ran:"]
        if self.ours is not None:
            out.append(f"    before the rewrite  {_listed(self.before)}")
            out.append(f"    the rewrite         {self.ours.text()}, on {self.ours.parent_id}")
            out.append(f"    after the rewrite   {_listed(self.after)}")
            out.append(
                f"    judged on its own commit: {self.ours.parent_id} before, {self.ours.snapshot_id} after"
            )
        else:
            out.append(f"    {_listed(self.after)}")
        if not self.complete:
            out.append(
                f"    (the history from the current snapshot does not reach {self.since}: rolled back?)"
            )
        return out


def _listed(commits: list[Commit], most: int = 5) -> str:
    if not commits:
        return "none"
    shown = ", ".join(c.text() for c in commits[:most])
    return shown + (f", and {len(commits) - most} more" if len(commits) > most else "")


def _commit(snapshot: Any) -> Commit:
    parent = snapshot.parentId()
    summary = snapshot.summary()
    return Commit(
        snapshot_id=int(snapshot.snapshotId()),
        parent_id=int(parent) if parent is not None else None,
        operation=str(snapshot.operation()),
        committed_ms=int(snapshot.timestampMillis()),
        summary={str(k): str(summary.get(k)) for k in list(summary.keySet())} if summary else {},
    )


def since(jtable: Any, snapshot_id: int | None) -> tuple[list[Commit], bool]:
    """The commits in the current snapshot's history after `snapshot_id`, oldest first (the
    table refreshed first), and whether the walk met `snapshot_id`."""
    jtable.refresh()
    found: list[Commit] = []
    snap = jtable.currentSnapshot()
    while snap is not None and int(snap.snapshotId()) != snapshot_id:
        found.append(_commit(snap))
        parent = snap.parentId()
        snap = jtable.snapshot(parent) if parent is not None else None
    return found[::-1], snapshot_id is None or snap is not None


def interleaved(jtable: Any, snapshot_id: int | None, rewrite_ran: tuple[int, int] | None) -> Interleaved:
    """The commits since `snapshot_id`, with the doctor's rewrite found among them: the rewrite
    commit made while its statement ran (`rewrite_ran`: its start and end, epoch milliseconds)."""
    commits, complete = since(jtable, snapshot_id)
    ours = None
    if rewrite_ran is not None:
        start, end = rewrite_ran
        mine = [c for c in commits if c.rewrite and start <= c.committed_ms <= end]
        ours = mine[-1] if mine else None
    if ours is None:
        return Interleaved(snapshot_id, None, [], commits, complete)
    at = commits.index(ours)
    return Interleaved(snapshot_id, ours, commits[:at], commits[at + 1 :], complete)
