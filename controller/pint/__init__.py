"""PINT (Ben Basat et al.): probabilistic in-band telemetry, control side.

``hashing``: the global hashes switches and sink agree on; ``engine``:
queries, the bit budget and the execution plan (query-set ranges of the
query-selection hash); ``values``: value approximation and per-packet
maximum; ``pathtrace``/``peeling``/``inference``: static per-flow path
tracing (Baseline, XOR, hybrid; fragments) and its decoder; ``dynamic``:
per-(flow, hop) KLL sketches; ``recorder``: the recording module;
``analysis``: expected packets to decode; ``simulate``: Monte Carlo of
many flows. See docs/pint.md.
"""
