"""The errors a p4-utils API call raises or prints.

p4-utils' APIs catch bad input (an unknown table, a wrong number of match
keys, a value that does not fit) and print ``Error: ...`` instead of
raising; ``bad_input`` does the same. A call intbed cannot honour raises
``NotHonouredError``, which is not caught: a controller relying on it must
stop, not run on in a state it did not ask for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from common.errors import IntbedError
from controller.bmcli.parse import CommandFileError
from controller.p4rt.errors import P4RuntimeError

F = TypeVar("F", bound=Callable[..., Any])


class UIn_Error(Exception):  # noqa: N801 - p4-utils' name, which scripts catch
    """Bad input to an API call (p4-utils' ``UIn_Error``)."""

    def __init__(self, info: str = "") -> None:
        super().__init__(info)
        self.info = info

    def __str__(self) -> str:
        return self.info


class NotHonouredError(IntbedError):
    """An API call intbed cannot carry out over P4Runtime, and why."""

    def __init__(self, call: str, reason: str) -> None:
        super().__init__(f"{call}: not supported by intbed: {reason}")
        self.call = call

    def __str__(self) -> str:  # a traceback's last line, in the user's script
        return self.message


def bad_input(func: F) -> F:
    """Print a bad-input error as p4-utils does and return None: the Thrift
    API prints ``Error: ...`` for bad input; the P4Runtime API (whose class
    sets ``catch_all``) prints any exception's message alone."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        catch_all = bool(args) and getattr(args[0], "catch_all", False)
        try:
            return func(*args, **kwargs)
        except NotHonouredError:
            raise
        except (UIn_Error, CommandFileError, IntbedError) as exc:
            text = (_reason(exc.message) if isinstance(exc, CommandFileError)
                    else exc.message if isinstance(exc, IntbedError) else str(exc))
            if isinstance(exc, P4RuntimeError) and not catch_all:
                print(f"Invalid operation ({exc})")
            else:
                print(text if catch_all else f"Error: {text}")
        except Exception as exc:
            if not catch_all:
                raise
            print(exc)
        return None

    return wrapper  # type: ignore[return-value]


def _reason(message: str) -> str:
    """A command error without the command's echo (``name: reason (in '...')``)."""
    head, _, rest = message.partition(": ")
    text = rest or head
    cut = text.rfind(" (in '")
    return text[:cut] if cut > 0 else text
