"""Each system's run, written once against ``orchestration.network.Network``."""
