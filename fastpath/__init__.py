"""The compiled fast path: the sim's hot modules and the generated
pipelines as C extensions built by Cython, loaded in place of their Python
source where a build of exactly that source (and of every module whose
declarations it was compiled against) exists.

``loader`` finds and loads the builds (and decides, once a process, which
groups of modules run compiled), ``build`` makes them, ``pgo`` makes them
profile-guided. The Python modules stay the reference: what is compiled
runs the same semantics and must give byte-identical results. Imports
only ``common``.
"""
