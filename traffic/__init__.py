"""Packet builders, flow schedules, senders and receivers."""
