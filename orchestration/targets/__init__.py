"""The live targets' switch binaries and BMv2 tooling.

``binaries``: ``intbed-switch`` and BMv2's ``simple_switch_grpc`` behind one
interface (prepare, command line, start-up, queue settings). ``p4c``: BMv2
builds by ``p4c``, cached by content. ``bmv2_stf``: STF tests on real BMv2
and the packet-by-packet comparison with intbed's engine.
"""
