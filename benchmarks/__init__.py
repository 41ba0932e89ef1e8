"""Throughput and memory benchmarks of intbed's components."""
