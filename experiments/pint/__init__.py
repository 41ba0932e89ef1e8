"""PINT's experiments: path tracing's packets to decode (``figures``, which
registers the others too), the same by pint.p4 switches on a network
(``paths_net``), quantiles of per-hop latency from sampled digests
(``quantiles``) and HPCC fed by PINT (``cc``). INT-label's Fig. 22, which
sets PINT beside INT and INT-label, is INT-label's
(``experiments.intlabel.fig22``)."""
