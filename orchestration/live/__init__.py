"""The live targets (``mininet``, ``bmv2``): networks of switch processes and
Mininet hosts on the wall clock, their traffic processes, and teardown that
leaves nothing behind.

- ``network``: ``LiveNetwork``, a Topology built as a Mininet network;
- ``traffic``: ``LiveTraffic``, ``traffic.live`` senders/receivers in hosts;
- ``tap``: ``FrameTap``, frames of a host's interfaces read in this process;
- ``watchdog``: switch processes that end mid-run;
- ``pcap``: the switches' transmitted frames, read back;
- ``snapshot``: namespaces, interfaces and processes, before and after;
- ``program``: P4 sources with their includes inlined, for device configs;
- ``options``: ``LiveOptions`` (results, Redis, pcaps) and run directories;
- ``netutil``: offloads off on an interface of a namespace given by pid.

Mininet is imported only when a network is built.
"""

from orchestration.live.options import LiveOptions, next_run_dir

__all__ = ["LiveOptions", "next_run_dir"]
