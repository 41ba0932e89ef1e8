"""One module per reproduced paper figure."""
