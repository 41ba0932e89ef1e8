"""intbed: a testbed for in-band network telemetry research on P4-16 switches.

This package holds the orchestration (targets, run lifecycle, results) and
the ``intbed`` command line.
"""
