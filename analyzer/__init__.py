"""憋七 (Bie Qi) analyzer: replay and validate game logs, analyse decisions, audit for collusion, report."""

__version__ = "0.1.0"
