"""Senders and receivers for live targets (not yet implemented).

The ``mininet`` and ``bmv2`` targets will run the same definitions as the
simulator inside Mininet hosts: a ``Schedule`` and ``Sender`` paced by the
wall clock writing frames to the host's interface, and a ``Receiver`` fed by
a packet socket, so a live run logs the same columns as a simulated one.
"""
