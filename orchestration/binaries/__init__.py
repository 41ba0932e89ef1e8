"""The switch binaries the live targets run, and BMv2's tooling.

``switches``: ``intbed-switch`` and BMv2's ``simple_switch_grpc`` behind one
interface (prepare, command line, start-up, queue settings) and what each
can do beyond BMv2's options. ``p4c``: BMv2 builds by ``p4c``, cached by
content. ``bmv2_stf``: STF tests on real BMv2 and the packet-by-packet
comparison with intbed's engine. (The targets themselves, ``sim``,
``mininet`` and ``bmv2``, are ``orchestration.network.TARGETS``.)
"""
