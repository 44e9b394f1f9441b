"""Answer scoring for LoCoMo and ES-MemEval, each labelled with the protocol it follows.

LoCoMo, official (the benchmark's own evaluation code, ``../shared/data/README.md``): normalise
(commas dropped, lowercase, punctuation stripped, the words a / an / the / and removed,
whitespace collapsed), Porter-stem the tokens (nltk), F1 over the multiset overlap; category 1
splits prediction and gold on commas and averages, over the gold parts, the best F1 against any
prediction part; category 3 cuts the gold at its first ';'; category 5 scores 1 when the
lowercased prediction contains "no information available" or "not mentioned".

LoCoMo, memory-paper protocol (Mem0 and others): categories 1-4 only; F1 over lowercased token
sets with . , ! ? replaced by spaces; BLEU-1 with smoothing method 1 (nltk) over the same tokens
(nltk's word_tokenize needs the punkt data, which is not on this machine: the protocol's simple
tokenizer is used for both, and said so in every output).

ES-MemEval (the benchmark's own scoring): F1 over unique lowercased word sets (non-word
characters replaced by spaces, no stemming); BERTScore F1 (bert-score, no idf, no baseline
rescaling) with the packaged all-MiniLM-L6-v2 at layer 6 instead of bert-base-uncased, which this
machine cannot download (``BERTSCORE_MODEL`` says which, in every output).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
ESMEMEVAL_CAPABILITIES = {
    "IE": "information extraction",
    "TR": "temporal reasoning",
    "CD": "conflict detection",
    "Abs": "abstention",
    "UM": "user modeling",
}
BERTSCORE_LAYER = 6
PROTOCOLS = {
    "locomo_official": "LoCoMo official: normalised, Porter-stemmed token F1 with the per-category rules (1-5)",
    "locomo_memory": "memory-paper protocol: categories 1-4, lowercased token-set F1, BLEU-1 with smoothing method 1 "
    "(simple tokenizer: nltk's punkt data is not available offline)",
    "esmemeval": "ES-MemEval: unique-word-set F1; BERTScore F1 with the packaged all-MiniLM-L6-v2, layer 6, no idf, "
    "no rescaling (bert-base-uncased cannot be downloaded here)",
}


# LoCoMo, official ----------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    text = str(text).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def _stemmed(text: str) -> list[str]:
    stem = _stemmer().stem
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """The official multiset F1 of stemmed, normalised tokens."""
    pred, ref = _stemmed(prediction), _stemmed(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: each comma-separated gold part matched by its best prediction part, averaged."""
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def abstains(prediction: str) -> bool:
    text = str(prediction).lower()
    return "no information available" in text or "not mentioned" in text


def locomo_official(prediction: str, gold: str | None, category: str) -> float:
    category = str(category)
    if category == "5":
        return 1.0 if abstains(prediction) else 0.0
    gold = "" if gold is None else str(gold)
    if category == "3":
        gold = gold.split(";")[0].strip()
    if category == "1":
        return multi_answer_f1(prediction, gold)
    return token_f1(prediction, gold)


# LoCoMo, memory-paper protocol ---------------------------------------------------------------


def simple_tokens(text: str) -> list[str]:
    text = str(text).lower()
    for ch in ".,!?":
        text = text.replace(ch, " ")
    return text.split()


def set_f1(prediction: str, gold: str, tokens=simple_tokens) -> float:
    pred, ref = set(tokens(prediction)), set(tokens(gold))
    if not pred or not ref:
        return 0.0
    same = len(pred & ref)
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    pred, ref = simple_tokens(prediction), simple_tokens(gold)
    if not pred or not ref:
        return 0.0
    return float(sentence_bleu([ref], pred, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))


# ES-MemEval ----------------------------------------------------------------------------------


def word_set_tokens(text: str) -> list[str]:
    return re.sub(r"\W", " ", str(text).lower()).split()


def esmemeval_f1(prediction: str, gold: str) -> float:
    return set_f1(prediction, gold, word_set_tokens)


def bertscore_f1(predictions: list[str], golds: list[str]) -> list[float]:
    """BERTScore F1 per pair with the packaged MiniLM (offline), layer 6, no idf, no rescaling."""
    if not predictions:
        return []
    from bert_score import score

    from ..llm.embeddings import default_model_path

    _, _, f1 = score(
        [str(p) or " " for p in predictions],
        [str(g) or " " for g in golds],
        model_type=default_model_path(),
        num_layers=BERTSCORE_LAYER,
        idf=False,
        rescale_with_baseline=False,
        device="cpu",
        batch_size=32,
        verbose=False,
    )
    return [float(v) for v in f1]


# Items and tables ----------------------------------------------------------------------------


def capability_code(name: str) -> str:
    """ES-MemEval capabilities as their short codes (real files may spell them out)."""
    from ..loaders.esmemeval import CAPABILITIES

    return CAPABILITIES.get(" ".join(str(name).replace("_", " ").split()).lower(), str(name))


def score_items(dataset: str, items: list[dict], bertscore: bool = True) -> list[dict]:
    """Each item ({question, answer (gold), prediction, category or capability}) with its scores."""
    out = []
    if dataset == "locomo":
        for it in items:
            cat = str(it.get("category", ""))
            row = {**it, "category": cat, "f1_official": locomo_official(it["prediction"], it.get("answer"), cat)}
            if cat in ("1", "2", "3", "4"):
                gold = "" if it.get("answer") is None else str(it["answer"])
                row["f1_memory"] = set_f1(it["prediction"], gold)
                row["bleu1_memory"] = bleu1(it["prediction"], gold)
            out.append(row)
        return out
    if dataset == "esmemeval":
        berts = (
            bertscore_f1([it["prediction"] for it in items], [str(it.get("answer") or "") for it in items])
            if bertscore
            else [None] * len(items)
        )
        for it, b in zip(items, berts):
            cap = capability_code(it.get("capability") or it.get("category") or "")
            out.append(
                {
                    **it,
                    "capability": cap,
                    "f1": esmemeval_f1(it["prediction"], str(it.get("answer") or "")),
                    "bertscore_f1": b,
                }
            )
        return out
    raise ValueError(f"unknown dataset {dataset!r} (locomo or esmemeval)")


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


METRICS = {
    "locomo": ("f1_official", "f1_memory", "bleu1_memory", "judge"),
    "esmemeval": ("f1", "bertscore_f1", "judge"),
}


def summarise(dataset: str, scored: list[dict]) -> dict:
    """Per-category (LoCoMo, keyed by id) or per-capability means and the overall means."""
    key = "category" if dataset == "locomo" else "capability"
    groups: dict[str, list[dict]] = {}
    for row in scored:
        groups.setdefault(str(row[key]), []).append(row)
    metrics = [m for m in METRICS[dataset] if any(m in r for r in scored)]
    per = {
        g: {"n": len(rows), **{m: _mean([r.get(m) for r in rows]) for m in metrics}}
        for g, rows in sorted(groups.items())
    }
    overall = {"n": len(scored), **{m: _mean([r.get(m) for r in scored]) for m in metrics}}
    if dataset == "locomo":  # the memory-paper protocol's overall leaves category 5 out
        main = [r for r in scored if r["category"] in ("1", "2", "3", "4")]
        overall["n_categories_1_4"] = len(main)
        overall["f1_official_categories_1_4"] = _mean([r["f1_official"] for r in main])
    names = LOCOMO_CATEGORIES if dataset == "locomo" else ESMEMEVAL_CAPABILITIES
    return {
        "dataset": dataset,
        key: per,
        "overall": overall,
        "names": {g: names.get(g, g) for g in per},
        "protocols": {k: v for k, v in PROTOCOLS.items() if k.startswith(dataset[:6])},
    }


def read_predictions(path) -> list[dict]:
    """A JSONL file of {question, answer, prediction, category | capability}; a bad line is named."""
    import json
    from pathlib import Path

    from ..errors import StoreError

    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"{path}: cannot read the predictions ({e.__class__.__name__})") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise StoreError(f"{path} line {n}: not JSON") from None
        if not isinstance(row, dict) or "prediction" not in row or "answer" not in row:
            raise StoreError(f"{path} line {n}: an object with 'question', 'answer' (gold) and 'prediction' is needed")
        row["prediction"] = "" if row["prediction"] is None else str(row["prediction"])
        rows.append(row)
    return rows
