"""Control: the P4Runtime service over a running Switch, in process or
behind gRPC, with one arbitration implementation for both."""
