"""Protocol 2.0 fuzzing: the stream decoder and ``decode`` against hostile byte streams.

Each case is a stream of 1–4 valid packets (status or instruction, random IDs, parameters that sometimes need
byte stuffing) between junk: random bytes, fake headers with any LEN, truncated packets and copies of valid
packets with flipped bytes. The stream is fed in random chunks, with no padding after it, to the compiled scanner
(every 8th case also to the pure-Python reference, which must agree) with ``max_length`` either the default or a
transaction's bound. Every 4th case also gives one mutated packet to ``decode``. Checks:

* crashes — any exception other than ``ProtocolError`` from ``decode``;
* bad CRC accepted — a frame returned whose CRC (recomputed by the reference CRC) does not match;
* valid packets lost — an intact packet not returned by the feed that completed it (only a chance CRC match of a
  fake header spanning it can do that; reported in ppm of the valid packets).

    .venv/bin/python bench/fuzz_protocol.py [--cases 1000000] [--seed 1]

Last line: ``RESULT crashes=<int> bad_crc_accepted=<int> valid_lost_ppm=<x>``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from servo_ff.bus.dynamixel import protocol as pr  # noqa: E402
from servo_ff.bus.dynamixel.stream import StreamDecoder, packet_at, warm_up  # noqa: E402

INSTS = [pr.INST_PING, pr.INST_READ, pr.INST_WRITE, pr.INST_REBOOT, pr.INST_SYNC_READ, pr.INST_SYNC_WRITE]


def valid_packet(rng: np.random.Generator) -> bytes:
    params = rng.integers(0, 256, int(rng.integers(0, 24)), dtype=np.uint8).tobytes()
    if rng.random() < 0.3:  # force stuffing
        k = int(rng.integers(0, len(params) + 1))
        params = params[:k] + b"\xff\xff\xfd" + params[k:]
    i = int(rng.integers(0, 253))
    if rng.random() < 0.7:
        return pr.encode_status(i, int(rng.integers(0, 256)), params)
    return pr.encode_instruction(i, INSTS[int(rng.integers(0, len(INSTS)))], params)


def junk(rng: np.random.Generator, pool: list[bytes]) -> bytes:
    kind = int(rng.integers(0, 5))
    if kind == 0:
        return rng.integers(0, 256, int(rng.integers(0, 40)), dtype=np.uint8).tobytes()
    if kind == 1:  # a fake header with any LEN (often longer than what follows)
        n = int(rng.integers(0, 0x10000)) if rng.random() < 0.5 else int(rng.integers(3, 64))
        return (
            b"\xff\xff\xfd\x00"
            + bytes([int(rng.integers(0, 256))])
            + n.to_bytes(2, "little")
            + rng.integers(0, 256, int(rng.integers(0, 12)), dtype=np.uint8).tobytes()
        )
    p = valid_packet(rng) if not pool or rng.random() < 0.5 else pool[int(rng.integers(0, len(pool)))]
    if kind == 2:  # truncated
        return p[: int(rng.integers(1, len(p)))]
    arr = np.frombuffer(p, dtype=np.uint8).copy()  # flipped bytes (header, LEN, body or CRC)
    for _ in range(int(rng.integers(1, 4))):
        arr[int(rng.integers(0, len(arr)))] ^= int(rng.integers(1, 256))
    return arr.tobytes()


def crc_ok(frame: bytes) -> bool:
    return pr.crc16_py(frame[:-2]) == (frame[-2] | (frame[-1] << 8))


def run(cases: int, seed: int):
    rng = np.random.default_rng(seed)
    c = dict(
        cases=0, crashes=0, bad_crc=0, valid=0, lost=0, frames=0, junk_frames=0, mismatch=0, decode_calls=0, decode_ok=0
    )
    pool: list[bytes] = []
    first_crash = None
    for k in range(cases):
        try:
            parts, good = [], []
            for _ in range(int(rng.integers(1, 5))):
                if rng.random() < 0.8:
                    parts.append(junk(rng, pool))
                p = valid_packet(rng)
                good.append((sum(map(len, parts)), p))
                parts.append(p)
            if rng.random() < 0.5:
                parts.append(junk(rng, pool))
            stream = b"".join(parts)
            pool = [p for _, p in good][:4]
            longest = max(pr.packet_length(p) - 7 for _, p in good)
            limit = pr.MAX_LENGTH if rng.random() < 0.5 else longest + int(rng.integers(0, 8))
            cuts = sorted(int(x) for x in rng.integers(0, len(stream) + 1, int(rng.integers(0, 4))))
            dec = StreamDecoder(max_length=limit)
            ref = StreamDecoder(max_length=limit) if k % 8 == 0 else None
            got_at: list[tuple[int, bytes]] = []  # (end offset of the feed, frame)
            base, prev = 0, 0
            for cut in cuts + [len(stream)]:
                sc = dec.scan(stream[prev:cut])
                offset = base - (len(sc.whole) - (cut - prev))  # stream offset of sc.whole[0]
                for s0, tot in zip(sc.starts, sc.totals):
                    frame = sc.whole[s0 : s0 + tot]
                    c["frames"] += 1
                    if not crc_ok(frame):
                        c["bad_crc"] += 1
                    packet_at(sc.whole, s0, tot)
                    got_at.append((offset + s0, frame))
                if ref is not None:
                    rs = ref.scan(stream[prev:cut], compiled=False)
                    if (rs.starts, rs.totals, rs.bad_starts, rs.bad_kinds) != (
                        sc.starts,
                        sc.totals,
                        sc.bad_starts,
                        sc.bad_kinds,
                    ):
                        c["mismatch"] += 1
                base += cut - prev
                prev = cut
            found = set(got_at)
            for at, p in good:
                c["valid"] += 1
                if (at, p) not in found:
                    c["lost"] += 1
            c["junk_frames"] += len(found - set(good))
            if k % 4 == 0:
                c["decode_calls"] += 1
                m = junk(rng, pool) if rng.random() < 0.7 else pool[0]
                try:
                    pkt = pr.decode(m)
                    c["decode_ok"] += 1
                    if not crc_ok(m):
                        c["bad_crc"] += 1
                    assert isinstance(pkt, pr.Packet)
                except pr.ProtocolError:
                    pass
        except Exception:  # noqa: BLE001 - counting crashes is the point
            c["crashes"] += 1
            if first_crash is None:
                first_crash = traceback.format_exc()
        c["cases"] += 1
    return c, first_crash


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warm_up()
    t0 = time.perf_counter()
    c, crash = run(args.cases, args.seed)
    dt = time.perf_counter() - t0
    ppm = 1e6 * c["lost"] / max(c["valid"], 1)
    print(
        f"Protocol 2.0 fuzzing: {c['cases']:,} cases in {dt:.1f} s ({1e6 * dt / max(c['cases'], 1):.1f} µs/case), "
        f"seed {args.seed}"
    )
    print(f"{'what':<48} {'count':>12}")
    rows = [
        ("cases", c["cases"]),
        ("crashes (exceptions)", c["crashes"]),
        ("valid packets in the streams", c["valid"]),
        ("valid packets lost", c["lost"]),
        ("frames returned", c["frames"]),
        ("  of them chance CRC matches in junk", c["junk_frames"]),
        ("frames returned with a bad CRC", c["bad_crc"]),
        ("compiled vs reference scanner disagreements", c["mismatch"]),
        ("decode() calls on mutated packets", c["decode_calls"]),
        ("  accepted (CRC valid)", c["decode_ok"]),
    ]
    for what, n in rows:
        print(f"{what:<48} {n:>12,}")
    if crash:
        print("first crash:\n" + crash)
    print(f"RESULT crashes={c['crashes']} bad_crc_accepted={c['bad_crc']} valid_lost_ppm={ppm:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
