"""Fake ``simple_switch_CLI``: the runtime CLI's prompt loop; each command goes
to the fake switch on --thrift-port and the switch's reply is printed."""

from __future__ import annotations

import cmd
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fakelib import option, record  # noqa: E402


class Cli(cmd.Cmd):
    prompt = "RuntimeCmd: "
    intro = "Control utility for runtime P4 table manipulation"

    def __init__(self, conn: socket.socket) -> None:
        super().__init__()
        self.conn = conn
        self.replies = conn.makefile("rb")

    def default(self, line: str) -> None:
        record("simple_switch_CLI", "line", line=line)
        self.conn.sendall(line.encode() + b"\n")
        reply = b""
        while not reply.endswith(b"\0"):
            chunk = self.replies.read1(4096)
            if not chunk:
                break
            reply += chunk
        text = reply.rstrip(b"\0").decode()
        if text:
            print(text)

    def emptyline(self) -> bool:
        return False

    def do_EOF(self, line: str) -> bool:
        return True


def main(argv: list[str]) -> int:
    port = int(option(argv, "--thrift-port", "9090"))
    record("simple_switch_CLI", "start", argv=argv)
    try:
        conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        print(f"Could not connect to thrift client on port {port}")
        return 1
    conn.settimeout(None)
    print("Obtaining JSON from switch...")
    print("Done")
    Cli(conn).cmdloop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
