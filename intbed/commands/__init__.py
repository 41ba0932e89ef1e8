"""Subcommands of the ``intbed`` command line, one module per group."""
