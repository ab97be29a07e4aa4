"""``/tf`` and ``/tf_static`` (tf2_msgs/TFMessage) of fixed frames, serialized once: the state publisher's link
poses and the MuJoCo sim's odom → base link."""

from __future__ import annotations

import struct

import numpy as np

TOPIC_TF, TOPIC_TF_STATIC = "/tf", "/tf_static"


class TfTemplate:
    """A TFMessage of fixed frames serialized once (as :class:`servo_ff.ros.cdr_template.CdrTemplate`): per publish
    only the stamps and the 7 doubles of each transform are written into the bytes."""

    def __init__(self, rows: tuple[int, ...], msg):
        from builtin_interfaces.msg import Time
        from rclpy.serialization import serialize_message

        self.rows = rows
        rng = np.random.default_rng(0x7F)
        sentinel = rng.uniform(1e3, 1e4, (len(rows), 7))
        for tf, v in zip(msg.transforms, sentinel):
            tf.header.stamp = Time(sec=_SENTINEL_STAMP[0], nanosec=_SENTINEL_STAMP[1])  # not the caller's stamp
            tr, r = tf.transform.translation, tf.transform.rotation
            tr.x, tr.y, tr.z, r.x, r.y, r.z, r.w = map(float, v)
        self._buf = bytearray(serialize_message(msg))
        self._u8 = np.frombuffer(self._buf, dtype=np.uint8)
        raw = bytes(self._buf)
        self._pose_at = np.array([raw.index(struct.pack("<d", x)) for x in sentinel.ravel()])[:, None] + np.arange(8)
        stamp = struct.pack("<iI", *_SENTINEL_STAMP)
        at = [i for i in range(len(raw) - 7) if raw.startswith(stamp, i)]
        if len(at) != len(rows):
            raise ValueError(f"TFMessage: {len(at)} stamps found for {len(rows)} transforms")
        self._stamp_at = np.array(at)[:, None] + np.arange(8)

    def data(self, poses: np.ndarray, stamp) -> bytes:
        self._u8[self._pose_at] = (
            np.ascontiguousarray(poses[list(self.rows)], dtype="<f8").view(np.uint8).reshape(-1, 8)
        )
        self._u8[self._stamp_at] = np.frombuffer(struct.pack("<iI", stamp.sec, stamp.nanosec), dtype=np.uint8)
        return bytes(self._buf)


_SENTINEL_STAMP = (0x5EC0_4D21, 0x3B9A_C9FE)
