"""One module per ``analyzer`` subcommand, each exposing a click command named ``command``."""
