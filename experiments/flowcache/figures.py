"""Importing this registers the SmartNIC flow-cache figures 3-6."""

import experiments.flowcache.accuracy  # noqa: F401
import experiments.flowcache.latency  # noqa: F401
import experiments.flowcache.readers  # noqa: F401
import experiments.flowcache.throughput  # noqa: F401
