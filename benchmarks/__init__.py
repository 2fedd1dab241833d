"""Benchmarks (``python -m benchmarks``): see harness.py. Never part of the test suite's timing."""
