"""P4-16 front end: cpp (``preprocess``), the LALR parser (``parser``) that
builds the syntax tree (``ast``), then name resolution and type checking."""
