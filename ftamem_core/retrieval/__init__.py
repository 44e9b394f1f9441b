"""Inference: retrieval (rewrite, scores, threshold, K), the memory packet, the answer; one
retrieval pipeline for ask, the app, the evaluation and the benchmark."""
