"""``intbed-switch``: the engine as a switch process on Linux interfaces.

It takes the command line of BMv2's ``simple_switch_grpc`` (``cli``), moves
frames through AF_PACKET sockets (``ports``), queues them per egress port on
the wall clock as BMv2's traffic manager does (``tm``) and serves P4Runtime
over gRPC (``main``).
"""
