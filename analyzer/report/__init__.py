"""Self-contained HTML pages: hand replayer, player, pair, audit and validation reports."""
