"""A terminal progress bar over construction events (turns done, units, calls, tokens, time)."""

from __future__ import annotations

import sys

from .construction import Event
from .store import Store


class ProgressBar:
    def __init__(self, store: Store, case_id: str, stream=sys.stderr):
        from tqdm import tqdm

        counts = store.session_turn_counts(case_id)
        self.store, self.case_id = store, case_id
        self.bar = tqdm(total=sum(counts.values()), unit="turn", file=stream, dynamic_ncols=True,
                        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} turns [{elapsed}] {postfix}")
        self.turns_by_session = {s.idx: counts.get(s.id, 0) for s in store.sessions(case_id)}
        self.units = self.links = 0
        self.build_id: int | None = None

    def __call__(self, event: Event) -> None:
        if event.kind == "build_started":
            self.build_id = event.data["build_id"]
        elif event.kind == "session_skipped":
            self.bar.update(self.turns_by_session.get(event.session, 0))
        elif event.kind == "session_started":
            self.done_to = event.data["first"] - 1
            self.bar.set_description(f"session {event.session + 1}/{len(self.turns_by_session)}")
        elif event.kind == "window" and event.data["final"]:
            last = event.data["final"][-1][1]
            self.bar.update(max(0, last - self.done_to))
            self.done_to = max(self.done_to, last)
        elif event.kind == "unit_finalised":
            self.units += 1
        elif event.kind == "link_added":
            self.links += 1
        elif event.kind == "language":
            self.bar.write(f"note: {event.data['note']}")
        elif event.kind == "cut":  # the build log says what the model did not see whole
            self.bar.write(f"turns {', '.join(map(str, event.data['turns']))} cut to fit the prompt "
                           f"(prompt_turn_chars {event.data['limit']:,}); stored whole")
        calls, tokens = self.store.build_usage(self.build_id) if self.build_id else (0, 0)
        self.bar.set_postfix_str(f"units {self.units} links {self.links} calls {calls} tokens {tokens}")

    def close(self) -> None:
        self.bar.close()
