"""One module per CLI subcommand; each loads what it needs and calls the core."""
