"""Topology model, generators and YAML descriptions."""
