"""INTCollector (Van Tu et al., CNSM 2018): the evaluation's figures 9-11
and the storage comparison of section V-B2, run on ``sinks.intcollector``.

``figures`` registers ``intcollector-fig9``, ``-fig10``, ``-fig11`` and
``-storage``; ``reports`` writes the TR v0.5 / INT v0.5 reports they feed,
``series`` is fig. 9's latency model, ``load`` measures the collector's CPU
in a child process fed at a paced rate, ``fattree`` is the storage run's
network and its queue model.
"""
