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
        from .editing import describe

        self.corrections = corrections
        listed = "; ".join(describe(c) for c in corrections[:5]) + (
            f"; and {len(corrections) - 5} more" if len(corrections) > 5 else "")
        super().__init__(f"a rebuild from scratch would discard {len(corrections)} correction(s) made by hand "
                         f"({listed}); keep building where it stopped instead, or say who discards them")
