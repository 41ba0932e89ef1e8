"""Neutral low-level pieces every intbed package may import: the error
hierarchy, seed derivation, pcap files, raw sockets and namespaces, the
Internet checksum, process stopping, package paths and name lookup.

Nothing here imports another intbed package."""
