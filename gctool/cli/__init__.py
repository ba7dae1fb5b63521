"""The command-line layer: one module per command, over the click-free core library."""
