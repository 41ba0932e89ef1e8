"""BMv2 ``simple_switch_CLI`` command files, applied over P4Runtime.

Artifacts written for p4-utils configure their switches with one command
file per switch (``table_add ...``). ``parse_commands`` reads such a file
into located commands and ``CommandRunner`` turns each into the P4Runtime
writes that leave the switch in the same state, so the same file works on
every target. The syntax is documented in ``docs/p4app.md``.
"""

from controller.bmcli.parse import Command, CommandFileError, parse_commands, read_command_file
from controller.bmcli.runner import (
    PRIORITY_BASE,
    CommandRunner,
    QueueSettings,
    RegisterAccess,
    cli_priority_to_p4rt,
)

__all__ = ["PRIORITY_BASE", "Command", "CommandFileError", "CommandRunner", "QueueSettings",
           "RegisterAccess", "cli_priority_to_p4rt", "parse_commands", "read_command_file"]
