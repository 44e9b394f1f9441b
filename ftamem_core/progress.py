"""A terminal progress bar over construction events (turns done, units, calls, tokens, time)."""

from __future__ import annotations

import sys
import time

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
        self.started = time.time()
        self.current_end: int | None = None

    def __call__(self, event: Event) -> None:
        if event.kind == "session_skipped":
            self.bar.update(self.turns_by_session.get(event.session, 0))
        elif event.kind == "session_started":
            self.first, self.done_to = event.data["first"], event.data["first"] - 1
            self.bar.set_description(f"session {event.session + 1}/{len(self.turns_by_session)}")
        elif event.kind == "window" and event.data["final"]:
            last = event.data["final"][-1][1]
            self.bar.update(max(0, last - self.done_to))
            self.done_to = max(self.done_to, last)
        elif event.kind == "unit_finalised":
            self.units += 1
        elif event.kind == "link_added":
            self.links += 1
        cost = self.store.conn.execute(
            "SELECT count(*), coalesce(sum(prompt_tokens + completion_tokens), 0) FROM llm_calls"
            " WHERE case_id = ? AND build_id = (SELECT max(id) FROM builds WHERE case_id = ?)",
            (self.case_id, self.case_id)).fetchone()
        self.bar.set_postfix_str(f"units {self.units} links {self.links} calls {cost[0]} tokens {cost[1]}")

    def close(self) -> None:
        self.bar.close()
