"""Importing this registers the SmartNIC flow-cache figures 3-6."""

import experiments.nicsink.accuracy  # noqa: F401
import experiments.nicsink.latency  # noqa: F401
import experiments.nicsink.readers  # noqa: F401
import experiments.nicsink.throughput  # noqa: F401
