"""The command line of ``intbed-switch``: ``simple_switch_grpc``'s flags.

Orchestration starts ``intbed-switch`` exactly as it starts BMv2::

    intbed-switch -i 1@s1-eth1 -i 2@s1-eth2 --device-id 0 --pcap /tmp/pcaps \\
        --log-console --thrift-port 9090 prog.p4 \\
        -- --grpc-server-addr 127.0.0.1:9559 --cpu-port 255

Options before ``--`` are BMv2's generic ones; after ``--`` come the target's
own (``--grpc-server-addr``, ``--cpu-port``), as with ``simple_switch_grpc``.
The positional argument is the P4-16 source where BMv2 takes its JSON;
without it (or with ``--no-p4``) the switch waits for
SetForwardingPipelineConfig. intbed's additions (``--queue-depth``,
``--queue-rate``, ``--loss``, ``--seed``) are accepted on either side of
``--``. Any mistake is one ``error: ...`` line (``SwitchConfigError``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from common.errors import IntbedError

# v1model's ports are bit<9>; 511 is BMv2's drop port, so usable ports stop at 510.
MAX_PORT = 510
# simple_switch: 64 packets per egress queue unless set_queue_depth says otherwise.
DEFAULT_QUEUE_DEPTH = 64
# simple_switch_grpc's default P4Runtime address.
DEFAULT_GRPC_ADDR = "0.0.0.0:9559"
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")


class SwitchConfigError(IntbedError):
    """A bad flag, value or interface given to ``intbed-switch``."""


@dataclass
class SwitchOptions:
    """Everything the command line decides."""

    program: Path | None = None
    interfaces: dict[int, str] = field(default_factory=dict)  # port -> interface
    device_id: int = 0
    pcap_dir: Path | None = None
    log_console: bool = False
    log_file: Path | None = None
    log_level: str = "info"
    thrift_port: int | None = None  # accepted for BMv2 compatibility, unused
    grpc_addr: str = DEFAULT_GRPC_ADDR
    cpu_port: int | None = None
    queue_depth: int = DEFAULT_QUEUE_DEPTH  # every port without its own
    port_queue_depth: dict[int, int] = field(default_factory=dict)
    queue_rate: float | None = None  # packets/s; None: as fast as the switch runs
    port_queue_rate: dict[int, float] = field(default_factory=dict)
    loss: float = 0.0  # every port without its own
    port_loss: dict[int, float] = field(default_factory=dict)
    seed: int = 0
    register_writes: bool = False

    def depth_of(self, port: int) -> int:
        return self.port_queue_depth.get(port, self.queue_depth)

    def rate_of(self, port: int) -> float | None:
        return self.port_queue_rate.get(port, self.queue_rate)

    def loss_of(self, port: int) -> float:
        return self.port_loss.get(port, self.loss)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise SwitchConfigError(message)


def _port(text: str, what: str) -> int:
    try:
        port = int(text, 0)
    except ValueError:
        raise SwitchConfigError(f"{what}: '{text}' is not a port number") from None
    if not 0 <= port <= MAX_PORT:
        raise SwitchConfigError(f"{what}: port {port} is outside 0..{MAX_PORT}")
    return port


def _interface(text: str) -> tuple[int, str]:
    port, sep, iface = text.partition("@")
    if not sep or not iface:
        raise SwitchConfigError(f"-i {text}: expected PORT@INTERFACE, e.g. 1@veth1")
    return _port(port, f"-i {text}"), iface


def _per_port(text: str, flag: str) -> tuple[int | None, str]:
    """``PORT:VALUE`` or a bare ``VALUE`` (every port)."""
    port, sep, value = text.rpartition(":")
    if not sep:
        return None, text
    return _port(port, f"{flag} {text}"), value


def _number(text: str, flag: str, kind: type, lo: float, hi: float | None = None) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise SwitchConfigError(f"{flag}: '{text}' is not a number") from None
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise SwitchConfigError(f"{flag}: {text} must be {bound}")
    return value


def _add_extras(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--queue-depth", action="append", default=[], metavar="[PORT:]N",
                        help="egress queue depth in packets (default 64)")
    parser.add_argument("--queue-rate", action="append", default=[], metavar="[PORT:]PPS",
                        help="egress queue service rate in packets/s (default: unlimited)")
    parser.add_argument("--loss", action="append", default=[], metavar="[PORT:]P",
                        help="drop frames leaving the port with probability P")
    parser.add_argument("--seed", type=int, default=None, help="seed of the loss draws")
    parser.add_argument("--register-writes", action="store_true",
                        help="accept P4Runtime register writes (BMv2's server refuses them)")


def _main_parser() -> _Parser:
    p = _Parser(prog="intbed-switch", add_help=True, allow_abbrev=False,
                description="A v1model switch on Linux interfaces, run by intbed's engine.",
                epilog="Target options after '--': --grpc-server-addr HOST:PORT, --cpu-port N.")
    p.add_argument("program", nargs="?", type=Path, help="P4-16 program (.p4)")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE",
                   help="attach Linux interface IFACE as switch port PORT (repeatable), "
                        "as BMv2's -i")
    p.add_argument("--device-id", type=int, default=0, metavar="N",
                   help="P4Runtime device id the controller addresses (default 0)")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write <iface>_in.pcap and <iface>_out.pcap into DIR")
    p.add_argument("--log-console", action="store_true", help="log to standard output")
    p.add_argument("--log-file", type=Path, default=None, metavar="FILE",
                   help="log to FILE (appended; with --log-console, to both)")
    p.add_argument("-L", "--log-level", default="info", choices=LOG_LEVELS)
    p.add_argument("--log-flush", action="store_true", help="accepted, logs are line-buffered")
    p.add_argument("--thrift-port", type=int, default=None, help="accepted and ignored")
    p.add_argument("--no-p4", action="store_true", help="start without a program")
    _add_extras(p)
    return p


def _target_parser() -> _Parser:
    p = _Parser(prog="intbed-switch ... --", add_help=False, allow_abbrev=False)
    p.add_argument("--grpc-server-addr", default=DEFAULT_GRPC_ADDR, metavar="HOST:PORT")
    p.add_argument("--cpu-port", default=None, metavar="N")
    _add_extras(p)
    return p


def parse_args(argv: Sequence[str]) -> SwitchOptions:
    """Options from a ``simple_switch_grpc`` command line (without argv[0])."""
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        main_argv, target_argv = argv[:cut], argv[cut + 1:]
    else:
        main_argv, target_argv = argv, []
    ns = _main_parser().parse_args(main_argv)
    tns = _target_parser().parse_args(target_argv)

    opts = SwitchOptions(device_id=ns.device_id, log_console=ns.log_console,
                         log_file=ns.log_file, log_level=ns.log_level,
                         thrift_port=ns.thrift_port)
    if ns.device_id < 0:
        raise SwitchConfigError(f"--device-id: {ns.device_id} must not be negative")
    if ns.program is not None and not ns.no_p4:
        if ns.program.suffix == ".json":
            raise SwitchConfigError(f"{ns.program}: intbed-switch runs P4-16 source; "
                                    "give the .p4 file instead of BMv2's JSON")
        if not ns.program.is_file():
            raise SwitchConfigError(f"{ns.program}: no such file")
        opts.program = ns.program
    for text in ns.interface:
        port, iface = _interface(text)
        if port in opts.interfaces:
            raise SwitchConfigError(f"-i {text}: port {port} is already {opts.interfaces[port]}")
        if iface in opts.interfaces.values():
            raise SwitchConfigError(f"-i {text}: interface {iface} is given twice")
        opts.interfaces[port] = iface
    if ns.pcap is not None:
        opts.pcap_dir = Path(ns.pcap)
        if not opts.pcap_dir.is_dir():
            raise SwitchConfigError(f"--pcap {ns.pcap}: no such directory")

    host, sep, gport = tns.grpc_server_addr.rpartition(":")
    if not sep or not host or not gport.isdigit() or int(gport) > 65535:
        raise SwitchConfigError(f"--grpc-server-addr {tns.grpc_server_addr}: expected HOST:PORT")
    opts.grpc_addr = tns.grpc_server_addr
    if tns.cpu_port is not None:
        opts.cpu_port = _port(tns.cpu_port, "--cpu-port")
        if opts.cpu_port in opts.interfaces:
            raise SwitchConfigError(f"--cpu-port {opts.cpu_port}: port is already "
                                    f"{opts.interfaces[opts.cpu_port]}")

    for text in ns.queue_depth + tns.queue_depth:
        port, value = _per_port(text, "--queue-depth")
        depth = int(_number(value, f"--queue-depth {text}", int, 1))
        if port is None:
            opts.queue_depth = depth
        else:
            opts.port_queue_depth[port] = depth
    for text in ns.queue_rate + tns.queue_rate:
        port, value = _per_port(text, "--queue-rate")
        rate = _number(value, f"--queue-rate {text}", float, 0.0)
        rate_or_none = rate or None  # 0: unlimited, as BMv2's set_queue_rate 0 means no limit
        if port is None:
            opts.queue_rate = rate_or_none
        else:
            opts.port_queue_rate[port] = rate_or_none  # type: ignore[assignment]
    for text in ns.loss + tns.loss:
        port, value = _per_port(text, "--loss")
        p = _number(value, f"--loss {text}", float, 0.0, 1.0)
        if port is None:
            opts.loss = p
        else:
            opts.port_loss[port] = p
    seed = tns.seed if tns.seed is not None else ns.seed
    opts.seed = seed if seed is not None else 0
    opts.register_writes = ns.register_writes or tns.register_writes
    return opts
