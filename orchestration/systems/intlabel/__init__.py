"""INT-label's run on any target: its configuration (``config``), the run
(``run``) and its measurements against the ground truth (``metrics``)."""
