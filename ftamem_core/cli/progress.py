"""A terminal progress bar over construction events (turns done, units, calls, tokens, time)."""

from __future__ import annotations

import sys

from ..construction import build_events as ev
from ..storage.store import Store


class ProgressBar:
    def __init__(self, store: Store, case_id: str, stream=sys.stderr):
        from tqdm import tqdm

        counts = store.session_turn_counts(case_id)
        self.store, self.case_id = store, case_id
        self.bar = tqdm(
            total=sum(counts.values()),
            unit="turn",
            file=stream,
            dynamic_ncols=True,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} turns [{elapsed}] {postfix}",
        )
        self.turns_by_session = {s.idx: counts.get(s.id, 0) for s in store.sessions(case_id)}
        self.units = self.links = 0
        self.build_id: int | None = None

    def __call__(self, event: ev.BuildEvent) -> None:
        if isinstance(event, ev.BuildStarted):
            self.build_id = event.build_id
        elif isinstance(event, ev.SessionSkipped):
            self.bar.update(self.turns_by_session.get(event.session, 0))
        elif isinstance(event, ev.SessionStarted):
            self.done_to = event.first - 1
            self.bar.set_description(f"session {event.session + 1}/{len(self.turns_by_session)}")
        elif isinstance(event, ev.WindowSegmented) and event.final:
            last = event.final[-1][1]
            self.bar.update(max(0, last - self.done_to))
            self.done_to = max(self.done_to, last)
        elif isinstance(event, ev.UnitFinalised):
            self.units += 1
        elif isinstance(event, ev.LinkAdded):
            self.links += 1
        elif isinstance(event, ev.LanguageNote):
            self.bar.write(f"note: {event.note}")
        elif isinstance(event, ev.TurnsCut):  # the build log says what the model did not see whole
            self.bar.write(
                f"turns {', '.join(map(str, event.turns))} cut to fit the prompt "
                f"(prompt_turn_chars {event.limit:,}); stored whole"
            )
        calls, tokens = self.store.build_usage(self.build_id) if self.build_id else (0, 0)
        self.bar.set_postfix_str(f"units {self.units} links {self.links} calls {calls} tokens {tokens}")

    def close(self) -> None:
        self.bar.close()
