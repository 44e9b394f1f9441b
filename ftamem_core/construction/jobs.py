"""Background builds for the app: one thread per case, its progress events kept for display,
stoppable. The build itself is construction.Builder; this only runs it off the page's thread."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from .build_events import BuildEvent
from .builder import Builder, BuildReport


@dataclass
class BuildJob:
    case_id: str
    builder: Builder
    segmentation: str
    window: int | None = None
    from_scratch: bool = False
    discard_corrections: str | None = None  # who decided a rebuild from scratch may discard corrections
    events: list[BuildEvent] = field(default_factory=list)
    report: BuildReport | None = None
    error: str = ""
    started: float = field(default_factory=time.time)
    finished: float | None = None
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self) -> "BuildJob":
        self.builder.progress = self.events.append
        self.thread = threading.Thread(target=self._run, name=f"build-{self.case_id}", daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            self.report = self.builder.build(
                self.case_id, self.segmentation, self.window, self.from_scratch, self.discard_corrections
            )
        except Exception as e:  # shown on the page; the build records its own status
            self.error = str(e).splitlines()[0] if str(e) else e.__class__.__name__
        finally:
            self.finished = time.time()

    def stop(self) -> None:
        self.builder.stop.set()


class JobRegistry:
    """At most one running build per case, shared by every browser tab of this process."""

    def __init__(self) -> None:
        self._jobs: dict[str, BuildJob] = {}
        self._lock = threading.Lock()

    def get(self, case_id: str) -> BuildJob | None:
        return self._jobs.get(case_id)

    def running_cases(self) -> list[str]:
        """Cases whose build is running now (their model calls come before an ask's)."""
        return sorted(case_id for case_id, job in list(self._jobs.items()) if job.running)

    def forget(self, case_id: str) -> None:
        """Stop the case's build and drop its events (they hold units' text): erasure."""
        with self._lock:
            job = self._jobs.pop(case_id, None)
        if job is not None:
            job.stop()
            job.events.clear()
            job.report = None

    def start(self, job: BuildJob) -> BuildJob:
        with self._lock:
            current = self._jobs.get(job.case_id)
            if current is not None and current.running:
                return current
            self._jobs[job.case_id] = job
            return job.start()
