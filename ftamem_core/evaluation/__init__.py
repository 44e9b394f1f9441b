"""Evaluation: measuring the memory against the benchmarks' questions and simple baselines."""
