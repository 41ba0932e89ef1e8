"""Compile time: P4-16 source to one program description and generated code.

``frontend`` (cpp, parser, syntax tree, types, scopes), ``codegen`` (the
syntax tree to Python source), ``schema`` (the program description every
later stage reads: tables, actions, externs, controller headers),
``p4info`` (P4Info from that description, as p4c writes it) and
``pipeline`` (``compile_file``: the stages in order, cached).
"""
