"""What the INTCollector figures share: the paper's title and the checks
of their parameters (each an error message for a bad value, or None)."""

from __future__ import annotations

from experiments.checks import Check, each, non_negative, one_of, positive, within

__all__ = ["PAPER", "Check", "each", "even_arity", "non_negative", "one_of", "positive",
           "within"]

PAPER = ("INTCollector: A High-performance Collector for In-band Network Telemetry "
         "(Van Tu, Hyun, Kim, Yoo, Hong)")

even_arity = each(lambda x: x in (4, 6, 8, 10, 12, 14, 16), "must be an even number in 4..16")
