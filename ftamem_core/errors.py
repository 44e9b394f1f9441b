"""What the store refuses (raised by the store and its parts, caught by the pages and the CLI)."""


class StoreError(Exception):
    """A write the store refuses; the message says why. Nothing was written."""


class CaseExists(StoreError):
    pass


class NotFound(StoreError):
    pass


class BuildRunning(StoreError):
    """The case is being built by a live process."""


class VersionConflict(StoreError):
    """The record changed since it was read (another tab or process wrote it)."""


class CorrectionsAtRisk(StoreError):
    """A rebuild from scratch would discard what people corrected by hand."""

    def __init__(self, corrections: list[dict]):
        self.corrections = corrections
        listed = "; ".join(describe(c) for c in corrections[:5]) + (
            f"; and {len(corrections) - 5} more" if len(corrections) > 5 else ""
        )
        super().__init__(
            f"a rebuild from scratch would discard {len(corrections)} correction(s) made by hand "
            f"({listed}); keep building where it stopped instead, or say who discards them"
        )


def describe(change: dict) -> str:
    """One line for a correction (a history row), as a person would list it."""
    what = {
        "edit": f"{change['field']} edited",
        "delete": "deleted",
        "add": "added",
        "delete_memory": "memory deleted",
    }.get(change["action"], change["action"])
    name = f"m{change['object_id']}" if change["object"] == "unit" else f"{change['object']} {change['object_id']}"
    return f"{name} {what} by {change['who'] or 'someone'} ({change['at'][:10]})" + (
        f": {change['reason']}" if change["reason"] else ""
    )
