"""p4-utils' ``p4utils.utils``: the controller-side modules."""
