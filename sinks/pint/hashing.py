"""PINT's global hash functions, computed the way a v1model switch can.

Every switch on a packet's path and the sink must draw the *same* random
outcome for a packet (which query set runs, whether hop ``i`` writes)
without exchanging bits, so every outcome is a hash of the packet.

* The **packet id** is the standard CRC-32 (v1model ``HashAlgorithm.crc32``,
  BMv2's ``crc32``) over the IPv4 source and destination, protocol, the
  two L4 ports and the IPv4 identification, big-endian, 15 bytes. Within a
  flow only the identification varies, so a flow has at most 65,536
  distinct ids; CRC-32 detects every burst of up to 32 bits, so distinct
  identifications of one flow always give distinct ids.
* A **hash word** of a packet (and hop number ``i``, 1-based, from the TTL)
  is ``fmix32(crc32(id ‖ i) ^ salt)``: the CRC of the 4-byte id, with the
  hop number appended as one byte, then MurmurHash3's 32-bit finaliser
  (xor-shift and multiply, which v1model's ``bit<32>`` arithmetic
  computes). The finaliser is needed because a CRC is affine over GF(2):
  the CRCs of ``id ‖ i`` and ``id ‖ j`` differ by a constant that does not
  depend on the packet, so the top bits that decide "below 1/i" would be
  correlated between hops and reservoir sampling would no longer pick each
  hop with probability 1/k. Each use (query selection ``q``, per-hop ``g``,
  scheme choice, fragment choice, rounding) has its own 32-bit salt
  derived from the run seed and the query's name, so they are independent.
* The paper's real-valued hashes in [0, 1) are the words divided by 2^32
  (M = 32 rather than the paper's example M = 64: a v1model hash is at most
  32 bits wide); "h < x" is the integer comparison ``word < threshold(x)``
  with ``threshold(x) = round(x * 2^32)``, a constant the control plane
  installs.
"""

from __future__ import annotations

import numba
import numpy as np

from common.seeds import derive_seed

__all__ = [
    "GlobalHashes",
    "below",
    "crc32_bytes",
    "fmix32",
    "packet_ids",
    "scaled",
    "threshold",
    "to_unit",
    "top_bits",
]

TWO32 = 1 << 32


def _crc_table() -> np.ndarray:
    """The byte table of reflected CRC-32 (polynomial 0x04C11DB7)."""
    table = np.zeros(256, dtype=np.uint32)
    for byte in range(256):
        reg = byte
        for _ in range(8):
            reg = (reg >> 1) ^ 0xEDB88320 if reg & 1 else reg >> 1
        table[byte] = reg
    return table


CRC_TABLE = _crc_table()


def _crc_update(reg: np.ndarray, column: np.ndarray) -> np.ndarray:
    """Feed one byte per row into the (uninverted) CRC registers."""
    index = (reg ^ column.astype(np.uint32)) & np.uint32(0xFF)
    return CRC_TABLE[index] ^ (reg >> np.uint32(8))


def crc32_bytes(rows: np.ndarray) -> np.ndarray:
    """CRC-32 of each row of a ``(n, length)`` uint8 array (zlib's CRC)."""
    rows = np.asarray(rows, dtype=np.uint8)
    reg = np.full(rows.shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for col in range(rows.shape[1]):
        reg = _crc_update(reg, rows[:, col])
    return reg ^ np.uint32(0xFFFFFFFF)


@numba.njit(cache=True)
def hop_word_scalar(base: np.uint32, hop: int, salt: np.uint32, table: np.ndarray) -> np.uint32:
    """fmix32(crc32(message ‖ hop) ^ salt) from the message's CRC ``base``
    (for numba loops that hash per packet and hop)."""
    ones = np.uint32(0xFFFFFFFF)
    reg = base ^ ones
    reg = table[(reg ^ np.uint32(hop)) & np.uint32(0xFF)] ^ (reg >> np.uint32(8))
    x = (reg ^ ones) ^ salt
    x ^= x >> np.uint32(16)
    x = np.uint32(x * np.uint32(0x85EBCA6B))
    x ^= x >> np.uint32(13)
    x = np.uint32(x * np.uint32(0xC2B2AE35))
    x ^= x >> np.uint32(16)
    return x


@numba.njit(cache=True)
def _hop_word_kernel(base: np.ndarray, hop: int, salt: np.uint32, table: np.ndarray) -> np.ndarray:
    """One pass instead of numpy's dozen (this runs per hop on every packet)."""
    out = np.empty(base.shape[0], dtype=np.uint32)
    for j in range(base.shape[0]):
        out[j] = hop_word_scalar(base[j], hop, salt, table)
    return out


def fmix32(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's finaliser: a bijection on 32 bits with full avalanche."""
    x = np.asarray(x, dtype=np.uint32).copy()
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    x ^= x >> np.uint32(16)
    return x


def _be_columns(values: np.ndarray, nbytes: int) -> list[np.ndarray]:
    values = np.asarray(values, dtype=np.uint64)
    return [
        ((values >> np.uint64(8 * (nbytes - 1 - i))) & np.uint64(0xFF)).astype(np.uint8)
        for i in range(nbytes)
    ]


def packet_ids(
    src: np.ndarray | int,
    dst: np.ndarray | int,
    proto: np.ndarray | int,
    sport: np.ndarray | int,
    dport: np.ndarray | int,
    ip_id: np.ndarray | int,
) -> np.ndarray:
    """32-bit packet ids from header fields (arrays broadcast together)."""
    fields = np.broadcast_arrays(*(np.asarray(f, dtype=np.uint64) for f in
                                   (src, dst, proto, sport, dport, ip_id)))
    widths = (4, 4, 1, 2, 2, 2)
    columns: list[np.ndarray] = []
    for field, width in zip(fields, widths):
        columns.extend(_be_columns(field.ravel(), width))
    return crc32_bytes(np.stack(columns, axis=1)).reshape(fields[0].shape)


def threshold(probability: float) -> int:
    """The integer a switch compares a hash word with for "below p"."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"probability {probability} is outside [0, 1]")
    return round(probability * TWO32)


class GlobalHashes:
    """The hash words one query's switches and sink agree on.

    ``salt(use)`` is the 32-bit constant installed in the switches for that
    use; the words are ``fmix32(crc32(id [‖ hop]) ^ salt)``.
    """

    def __init__(self, seed: int, name: str) -> None:
        self.seed = seed
        self.name = name
        self._salts: dict[str, np.uint32] = {}

    def salt(self, use: str) -> int:
        if use not in self._salts:
            seed = derive_seed(self.seed, "pint", self.name, use)
            self._salts[use] = np.uint32(seed & 0xFFFFFFFF)
        return int(self._salts[use])

    def _mix(self, crc: np.ndarray, use: str) -> np.ndarray:
        self.salt(use)
        return fmix32(crc ^ self._salts[use])

    def packet_word(self, pids: np.ndarray, use: str) -> np.ndarray:
        """A word of the packet alone (query selection, scheme, fragment)."""
        pids = np.asarray(pids, dtype=np.uint32)
        return self._mix(crc32_bytes(np.stack(_be_columns(pids, 4), axis=1)), use)

    def id_crcs(self, pids: np.ndarray) -> np.ndarray:
        """CRC-32 of each 4-byte packet id: the start every hop word shares."""
        pids = np.asarray(pids, dtype=np.uint32)
        return crc32_bytes(np.stack(_be_columns(pids, 4), axis=1))

    def hop_words(self, pids: np.ndarray, use: str, hops: int) -> np.ndarray:
        """Words of (packet, hop) for hops 1..``hops``: shape ``(hops, n)``."""
        base = self.id_crcs(pids)
        out = np.empty((hops, base.shape[0]), dtype=np.uint32)
        for hop in range(1, hops + 1):
            out[hop - 1] = self.hop_word_from(base, use, hop)
        return out

    def hop_word(self, pids: np.ndarray, use: str, hop: int) -> np.ndarray:
        """The word of (packet, hop ``hop``), as switch number ``hop`` computes it."""
        return self.hop_word_from(self.id_crcs(pids), use, hop)

    def hop_word_from(self, id_crcs: np.ndarray, use: str, hop: int) -> np.ndarray:
        """``hop_word`` from the ids' CRCs (``id_crcs``), to hash many hops."""
        if not 0 <= hop <= 255:
            raise ValueError(f"hop number {hop} does not fit the hashed byte")
        self.salt(use)
        return _hop_word_kernel(id_crcs, hop, self._salts[use], CRC_TABLE)


def below(words: np.ndarray, probability: float) -> np.ndarray:
    """``word < threshold(probability)``, exact also for probability 1."""
    return words.astype(np.uint64) < np.uint64(threshold(probability))


def to_unit(words: np.ndarray) -> np.ndarray:
    """The paper's real-valued hash in [0, 1): ``word / 2^32``."""
    return np.asarray(words, dtype=np.uint32).astype(np.float64) / TWO32


def top_bits(words: np.ndarray, n: int) -> np.ndarray:
    """An ``n``-bit string of each word (its top bits), 1 <= n <= 32."""
    if not 1 <= n <= 32:
        raise ValueError(f"a hash word has 1 to 32 bits, not {n}")
    return np.asarray(words, dtype=np.uint32) >> np.uint32(32 - n)


def scaled(words: np.ndarray, n: int) -> np.ndarray:
    """``floor(word * n / 2^32)``: a uniform index in [0, n) (a shift when n is a power of 2)."""
    return ((words.astype(np.uint64) * np.uint64(n)) >> np.uint64(32)).astype(np.int64)
