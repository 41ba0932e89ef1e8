"""Test tools: p4c's STF packet tests (``stf``) and veth/namespace rigs
(``netns``) for switch processes."""
