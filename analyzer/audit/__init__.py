"""Collusion audit: pair signals, calibration against honest play, scoring, evidence."""
