"""Benchmark harness of metrics_core: data generator, compiled-loop floor, runner, report."""
