"""INTCollector's evaluation (Van Tu et al., section V): importing this
registers ``intcollector-fig9`` (``fig9``), ``intcollector-fig10`` and
``-fig11`` (``cpu_figures``) and ``intcollector-storage`` (``storage``)."""

import experiments.intcollector.cpu_figures  # noqa: F401
import experiments.intcollector.fig9  # noqa: F401
import experiments.intcollector.storage  # noqa: F401
