"""Recorded replies replayed into a new build (benchmarks/evidence.py --record / --replay)."""

import json

from ftamem_core.governance import consent
from ftamem_core.construction.builder import Builder
from ftamem_core.llm.replay import Recording, Replaying
from ftamem_core.storage.store import Store

from scripted import HashEmbedder, Pipeline, section, turn_indices, unit
from test_construction import SETTINGS, doc


class OtherFacts(Pipeline):
    """Another draw of the model: other spans' facts in other words."""

    def extraction(self, messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {"memory_units": [unit(f"Another reading of turns {idx[0]}-{idx[-1]}", idx[0], idx[-1])]}


def built(llm):
    store = Store(":memory:")
    store.ingest([doc()])
    consent.record(store, "c1", "granted", "test", "scripted case")
    Builder(store, llm, HashEmbedder(), SETTINGS).build("c1")
    return store


def facts(store):
    return [(u.fact.text, u.evidence.start, u.evidence.end) for u in store.units("c1", None)]


def test_a_replayed_build_has_the_recorded_units_and_asks_the_model_the_rest(tmp_path):
    path = tmp_path / "replies.jsonl"
    first = Pipeline()
    original = built(Replaying(first.llm(), record=path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["stage"] for line in lines] == first.calls  # every reply, in order

    other = OtherFacts()
    replaying = Replaying(other.llm(), replay=path)
    again = built(replaying)
    assert facts(again) == facts(original)
    assert replaying.replayed == sum(line["stage"] in ("segmentation", "extraction") for line in lines)
    assert {"segmentation", "extraction"}.isdisjoint(other.calls) and "linking" in other.calls
    # the cost of a replayed call is the one recorded
    recorded = sum(line["prompt_tokens"] for line in lines if line["stage"] == "extraction")
    stages = {s["stage"]: s for s in again.cost("c1")["stages"]}
    assert stages["extraction"]["prompt_tokens"] == recorded


def test_replies_that_run_out_are_asked_of_the_model(tmp_path):
    path = tmp_path / "replies.jsonl"
    built(Replaying(Pipeline().llm(), record=path))
    segmentation_only = [line for line in path.read_text().splitlines() if json.loads(line)["stage"] == "segmentation"]
    path.write_text("\n".join(segmentation_only[:1]) + "\n")
    other = OtherFacts()
    again = built(Replaying(other.llm(), replay=path))
    assert other.calls.count("segmentation") == len(segmentation_only) - 1
    written = [text for text, _, _ in facts(again) if not text.startswith("Maya")]  # not the turns' own words
    assert written and all(text.startswith("Another reading") for text in written)


def test_a_request_the_recording_does_not_hold_is_asked_live_and_counted(tmp_path):
    """A changed check changes what linking is asked: those calls go to the backend (and say so),
    the unchanged segmentation and extraction requests are served from the file."""
    path = tmp_path / "replies.jsonl"
    built(Replaying(Pipeline().llm(), record=path))
    other = OtherFacts()
    replaying = Replaying(other.llm(), replay=path, stages=("segmentation", "extraction", "linking", "longitudinal"))
    store = Store(":memory:")
    store.ingest([doc()])
    consent.record(store, "c1", "granted", "test", "scripted case")
    # the facts share few words with their turns: dropped, the turns kept in their own words
    Builder(
        store,
        replaying,
        HashEmbedder(),
        SETTINGS.with_overrides(extraction={"ground_facts": True, "verbatim_fallback": True}),
    ).build("c1")
    served = replaying.served_by_stage()
    assert set(served["segmentation"]) == {"replayed"} and set(served["extraction"]) == {"replayed"}
    assert served["longitudinal"] == {"live": 2}  # it shows the session's units: other ones now
    assert "segmentation" not in other.calls and "longitudinal" in other.calls


def test_a_recording_without_digests_is_served_in_order_across_builds(tmp_path):
    """The dev builds' replies were kept without digests: one Recording serves two cases' builds
    in turn, the second taking up where the first stopped."""
    path, legacy = tmp_path / "replies.jsonl", tmp_path / "legacy.jsonl"
    first, second = built(Replaying(Pipeline().llm(), record=path)), built(Replaying(OtherFacts().llm(), record=path))
    legacy.write_text(
        "".join(
            json.dumps({k: v for k, v in json.loads(line).items() if k != "request"}) + "\n"
            for line in path.read_text().splitlines()
        )
    )
    recording = Recording(legacy, ("segmentation", "extraction", "linking", "longitudinal"))
    replays = [Replaying(Pipeline().llm(), replay=recording) for _ in range(2)]
    assert [facts(built(r)) for r in replays] == [facts(first), facts(second)]
    assert all(set(how for counts in r.served_by_stage().values() for how in counts) == {"in order"} for r in replays)
