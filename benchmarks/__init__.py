"""Benchmark harness of metrics_core (issue 6): data generator, compiled-loop floor, runner."""
