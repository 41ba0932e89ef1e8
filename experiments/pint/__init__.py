"""PINT's experiments: path tracing's packets to decode (``figures``),
INT-label's Fig. 22 against INT and INT-label (``fig22``), and quantiles
of per-hop latency from sampled digests (``quantiles``)."""

from experiments.pint import cc, fig22, figures, paths_net, quantiles  # noqa: F401 - they register
