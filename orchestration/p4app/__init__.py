"""p4-utils artifacts run unchanged: p4app.json networks and NetworkAPI scripts."""
