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
