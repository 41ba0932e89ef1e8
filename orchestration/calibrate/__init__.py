"""``intbed calibrate``: time a switch binary on veth pairs and fit the sim's
switch model to it (``dataplane.targets.sim.timing``).

``netns`` builds the two-host calibration network, ``send`` is the paced
sender that runs inside a host, ``sweep`` drives a load sweep and reads
the captures, ``fit`` turns the measurements into a profile.
"""
