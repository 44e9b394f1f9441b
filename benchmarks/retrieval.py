"""Retrieval at scale: ``python benchmarks/retrieval.py [--units 10000 100000 1000000] [--queries 200]``.

Prints p50/p95 latency of retrieval + expansion + packet assembly, the bare index search, recall@25
against exact float32 search, index build time and size, per case size. Same as
``ftamem bench retrieval --units N --queries Q``.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftamem_core.retrieval.bench import bench_retrieval, markdown_table  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description="retrieval latency and recall at scale")
    p.add_argument("--units", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for n in args.units:
        rows.append(bench_retrieval(n, args.queries))
        print(f"# {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
