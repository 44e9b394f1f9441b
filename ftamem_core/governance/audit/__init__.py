"""The memory-quality audit (the paper's supplementary audit, as a workflow): seeded stratified
samples of units and linked pairs (``sampling``), blind scoring 0-2 by two or more annotators
(``rounds``), agreement (``agreement``), automatic checks beside the human scores (``checks``)
and the report (``report``). The command line is in ``commands``, the page in pages/audit.py.
"""

from .rounds import (
    AuditError,
    correct,
    delete,
    dispute,
    get_item,
    get_round,
    import_scores,
    item_view,
    items,
    list_rounds,
    new_round,
    next_item,
    progress,
    redraw,
    reveal,
    revealed_to,
    score,
)
from .report import report, scores_csv, table_markdown

__all__ = [
    "AuditError",
    "correct",
    "delete",
    "dispute",
    "get_item",
    "get_round",
    "import_scores",
    "item_view",
    "items",
    "list_rounds",
    "new_round",
    "next_item",
    "progress",
    "redraw",
    "report",
    "reveal",
    "revealed_to",
    "score",
    "scores_csv",
    "table_markdown",
]
