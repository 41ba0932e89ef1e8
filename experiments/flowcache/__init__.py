"""Feng et al.'s SmartNIC flow-cache INT sink (section IV), run on
``sinks.flowcache``: ``figures`` registers ``flowcache-fig3`` (throughput
vs hops x instructions and vs event rate, ``throughput``), ``-fig4`` (host
reader processes needed vs event rate, into a private Redis, ``readers``,
with ``search``), ``-fig5`` (update, eviction and notification latency,
``latency``) and ``-fig6`` (histogram accuracy with a host reader of
finite rate, ``accuracy`` on ``hostreader``); ``service`` measures
intbed's reader, ``workload`` builds the packets.
"""
