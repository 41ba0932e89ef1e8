"""Small applications that run on any target: ping and friends."""
