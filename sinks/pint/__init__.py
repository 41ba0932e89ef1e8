"""PINT (Ben Basat et al.): probabilistic in-band telemetry, the sink and
analysis side (the switches' configuration is ``controller.pint``).

``hashing``: the global hashes switches and sink agree on; ``engine``:
queries, the bit budget and the execution plan (query-set ranges of the
query-selection hash); ``values``: value approximation and per-packet
maximum; ``pathtrace``/``peeling``/``inference``: static per-flow path
tracing (Baseline, XOR, hybrid; fragments) and its decoder; ``dynamic``:
per-(flow, hop) KLL sketches; ``recorder``: the recording module;
``sink_reports``: the sink's reports; ``analysis``: expected packets to
decode; ``simulate``: Monte Carlo of many flows; ``hpcc``: HPCC's window
law for the congestion-control use case. See docs/pint.md.
"""
