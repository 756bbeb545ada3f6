"""Compiled (numba) inner loops: the hot paths of validation and rollouts, over plain int arrays."""
