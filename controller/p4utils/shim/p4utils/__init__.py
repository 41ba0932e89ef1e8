"""p4-utils' package name for controller scripts intbed runs; the code is
``controller.p4utils`` (this directory is on the script's path only)."""

import _intbed_import  # noqa: F401 - intbed's packages first

