"""PINT (Ben Basat et al.), control side: ``p4config`` writes a run's
query plan and hash seeds into the switches' tables. The sink, the
decoders and the analysis are ``sinks.pint``; see docs/pint.md.
"""
