"""v1model digest() through both APIs: a DigestList from
SimpleSwitchP4RuntimeAPI.get_digest_list, and BMv2's packed learning
message from the Thrift API's notifications socket."""

from __future__ import annotations

import struct

import pytest

from common.paths import shared_dir
from controller.p4rt import InProcessTransport, P4RuntimeClient
from controller.p4utils.connect import CONTROLLER_ELECTION_ID
from controller.p4utils.learning import endpoint
from controller.p4utils.p4runtime_api import SimpleSwitchP4RuntimeAPI
from controller.p4utils.thrift_api import SimpleSwitchThriftAPI
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch
from orchestration.apps.ping import icmp_echo

PROGRAM = (shared_dir() / "third-party" / "p4-learning" / "04-L2_Learning" / "p4src"
           / "l2_learning_digest.p4")
pytestmark = pytest.mark.skipif(not PROGRAM.is_file(), reason=f"{PROGRAM} is not there")
SRC, DST = "00:00:0a:00:00:07", "00:00:0a:00:00:08"


def served() -> tuple[RuntimeService, P4RuntimeClient]:
    service = RuntimeService(Switch(compile_file(PROGRAM)))
    return service, P4RuntimeClient(InProcessTransport(service), service.p4info,
                                    election_id=CONTROLLER_ELECTION_ID)


def frame() -> bytes:
    return icmp_echo(SRC, DST, "10.0.0.7", "10.0.0.8", 1, 1)


def test_p4runtime_api_get_digest_list() -> None:
    service, client = served()
    api = SimpleSwitchP4RuntimeAPI(0, 9559, p4rt=client)
    assert api.get_digest_list(timeout=0.01) is None
    assert api.digest_enable("learn_t")
    service.process(3, frame())
    digest = api.get_digest_list(timeout=1)
    assert digest is not None and len(digest.data) == 1
    members = [int.from_bytes(m.bitstring, "big") for m in digest.data[0].struct.members]
    assert members == [int(SRC.replace(":", ""), 16), 3]


def test_thrift_learning_socket_packs_as_bmv2() -> None:
    service, client = served()
    api = SimpleSwitchThriftAPI(9090, p4rt=client)
    url = api.client.bm_mgmt_get_info().notifications_socket
    messages = endpoint(url).subscribe()  # what nnpy's SUB socket reads
    service.process(2, frame())
    message = messages.get(timeout=1)
    _, device, _, list_id, buffer_id, samples = struct.unpack("<iQiiQi", message[:32])
    assert (device, samples) == (service.device_id, 1)
    mac_hi, mac_lo, port = struct.unpack(">LHH", message[32:40])
    assert ((mac_hi << 16) | mac_lo, port) == (int(SRC.replace(":", ""), 16), 2)
    # Not acknowledged: the same sample is held back (BMv2's learning filter)...
    service.process(2, frame())
    assert messages.empty()
    # ...and acknowledging the list lets the next one through.
    api.client.bm_learning_ack_buffer(0, list_id, buffer_id)
    service.process(2, frame())
    assert struct.unpack("<iQiiQi", messages.get(timeout=1)[:32])[5] == 1
