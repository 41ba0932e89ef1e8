"""INT sink flow cache after Feng et al.'s SmartNIC design, run on the host:
H_P with LRU rows, general and event rings, per-switch histograms, aging
(docs/flowcache.md)."""
