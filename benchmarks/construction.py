"""Construction cost per granularity variant on one case with the embedded model.

    .venv/bin/python benchmarks/construction.py [--model qwen2.5-1.5b] [--file data/sample_case.json]
        [--variants bws fixed session pair] [--json]

Prints turns per minute, calls, tokens and units per turn for each variant (the paper spent 0.35
calls and about 576 tokens per LoCoMo turn with BWS).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ftamem_core.retrieval.bench import markdown_table  # noqa: E402
from ftamem_core.config import load_settings  # noqa: E402
from ftamem_core.construction.builder import Builder  # noqa: E402
from ftamem_core.llm.embeddings import Embedder  # noqa: E402
from ftamem_core.ingest import ingest_file  # noqa: E402
from ftamem_core.llm.factory import make_llm  # noqa: E402
from ftamem_core.storage.store import Store  # noqa: E402


def run(variant: str, file: Path, settings, case_id: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        outcome = ingest_file(
            store,
            file,
            only=[case_id] if case_id else None,
            consent_by="benchmark",
            consent_note="public research dataset",
        )
        case = next(iter(outcome))
        llm = make_llm(settings.llm, settings.storage.model_dir, recorder=store.record_call)
        started = time.perf_counter()
        report = Builder(store, llm, Embedder.from_settings(settings), settings).build(case, segmentation=variant)
        seconds = time.perf_counter() - started
        cost = store.cost(case)
        store.close()
    return {
        "variant": variant,
        "turns": cost["turns"],
        "seconds": round(seconds, 1),
        "turns_per_min": round(cost["turns"] / seconds * 60, 1),
        "calls_per_turn": cost["calls_per_turn"],
        "tokens_per_turn": cost["tokens_per_turn"],
        "units_per_turn": cost["units_per_turn"],
        "units": cost["units"],
        "partial": cost["partial_units"],
        "links": report.links,
        "status": report.status,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--file", type=Path, default=ROOT / "data" / "sample_case.json")
    p.add_argument("--case", help="one case of a multi-case file")
    p.add_argument("--variants", nargs="+", default=["bws", "fixed", "session", "pair"])
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    settings = load_settings(llm={"model": args.model})
    rows = []
    for variant in args.variants:
        rows.append(run(variant, args.file, settings, args.case))
        print(f"# {json.dumps(rows[-1])}", file=sys.stderr, flush=True)  # kept if a later variant is stopped
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"construction benchmark: {args.file.name}, model {args.model}, W={settings.segmentation.window_size}")
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
