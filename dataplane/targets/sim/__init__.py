"""Discrete-event network simulation: clock, links, queues, hosts."""
