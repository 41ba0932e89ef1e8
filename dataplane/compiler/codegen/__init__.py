"""The syntax tree to Python source: one function per parser state, action,
table and control, over a flat slot list of integers."""
