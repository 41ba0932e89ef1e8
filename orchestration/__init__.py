"""Orchestration: networks built from a Topology on any target behind one
interface (``network``), the targets themselves (``sim``, ``live``,
``targets``), and each system's run written once against that interface
(``systems``)."""

from fastpath import loader

loader.install()  # orchestration.apps.traffic runs compiled where built (fastpath.loader)
