"""`calibrate`: what CloudWatch measured of a deployed stack, against what its blueprint declares."""
