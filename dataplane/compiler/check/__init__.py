"""Semantic analysis between parsing and code generation.

``check_program`` binds every identifier to its declaration and gives
every expression a type, rejecting an ill-formed program with a located
``P4SemanticError`` (or ``P4UnsupportedError`` for what BMv2 cannot run)
before any code is generated. Its results stay in ``Facts`` so later
stages can read them instead of deriving them again.
"""

from dataplane.compiler.check.checker import check_program
from dataplane.compiler.check.env import Facts

__all__ = ["Facts", "check_program"]
