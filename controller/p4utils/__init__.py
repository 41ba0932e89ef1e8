"""p4-utils' controller API over intbed's P4Runtime client.

Controller scripts written for p4-utils import ``p4utils.utils.helper``,
``p4utils.utils.sswitch_thrift_API`` and ``p4utils.utils.sswitch_p4runtime_API``;
when intbed runs such a script it puts ``shim/`` first on its path, whose
``p4utils`` package re-exports what is here. Every call becomes P4Runtime
writes through ``controller.p4rt.P4RuntimeClient`` (Thrift-only behaviour
mapped as ``docs/p4utils.md`` lists), so the scripts drive the sim,
``intbed-switch`` and BMv2 alike.
"""
