"""Reading TensorBoard event files back: TFRecord frames (length, masked CRC-32C of the
length, an ``Event`` protocol buffer, its masked CRC-32C), checked and parsed with the protos
tensorboardX ships (the writer the dev extra installs)."""

from __future__ import annotations

import struct
from pathlib import Path


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_scalars(logdir: Path) -> list[tuple[str, int, float]]:
    """Every ``(tag, step, value)`` scalar of the event files under ``logdir``, in file order."""
    from tensorboardX.crc32c import crc32c
    from tensorboardX.proto.event_pb2 import Event

    files = sorted(logdir.rglob("events.out.tfevents.*"))
    assert files, f"no event file under {logdir}"
    out: list[tuple[str, int, float]] = []
    for path in files:
        data, pos = path.read_bytes(), 0
        while pos < len(data):
            header = data[pos : pos + 8]
            (length,) = struct.unpack("<Q", header)
            (crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
            assert crc == _masked(crc32c(header)), f"{path}: bad length CRC at byte {pos}"
            body = data[pos + 12 : pos + 12 + length]
            (crc,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
            assert crc == _masked(crc32c(body)), f"{path}: bad record CRC at byte {pos}"
            pos += 16 + length
            event = Event.FromString(body)
            for value in event.summary.value:
                out.append((value.tag, int(event.step), float(value.simple_value)))
    return out
