"""What of an IMU reading (sensor_msgs/Imu, no ROS import) the feed-forward and the walk's balance feedback can use.

* An orientation quaternion (x, y, z, w) must be finite with a non-zero norm; any other norm is normalised by the
  reader (a quaternion is a rotation only up to scale).
* A field the driver declares absent is refused: sensor_msgs/Imu (REP-145) says "If you have no estimate for one of
  the data elements (e.g. your IMU doesn't produce an orientation estimate), please set element 0 of the associated
  covariance matrix to -1". Such an IMU sends a zero or identity quaternion, which read as an orientation says
  "level".
"""

from __future__ import annotations

import math

NOT_PROVIDED = -1.0  # covariance element 0 of a field the IMU does not estimate (sensor_msgs/Imu, REP-145)


def quaternion_norm2(quat_xyzw) -> tuple[float, float, float, float, float]:
    """(x, y, z, w, ‖q‖²) of an orientation quaternion. Raises ValueError for other than 4 numbers, a non-finite
    value or a zero norm."""
    try:
        x, y, z, w = (float(c) for c in quat_xyzw)
    except (TypeError, ValueError):
        raise ValueError(f"IMU quaternion must be 4 numbers (x, y, z, w), got {quat_xyzw!r}") from None
    n2 = x * x + y * y + z * z + w * w
    if not (math.isfinite(n2) and n2 > 1e-18):
        raise ValueError(f"IMU quaternion must be finite with non-zero norm, got {(x, y, z, w)}")
    return x, y, z, w, n2


def unit_quaternion(quat_xyzw) -> tuple[float, float, float, float]:
    """The orientation quaternion normalised (ValueError as :func:`quaternion_norm2`)."""
    x, y, z, w, n2 = quaternion_norm2(quat_xyzw)
    if n2 == 1.0:
        return x, y, z, w
    n = math.sqrt(n2)
    return x / n, y / n, z / n, w / n


def declared_absent(field: str, covariance0: float) -> str | None:
    """Why ``field`` ("orientation", "angular_velocity") cannot be used when its covariance's element 0 is −1 (the
    IMU gives no estimate of it, REP-145); None otherwise."""
    if covariance0 == NOT_PROVIDED:
        return f"{field}_covariance[0] = -1: the IMU gives no {field.replace('_', ' ')} (REP-145)"
    return None


def rates_refusal(gyro_xyz, covariance0: float) -> str | None:
    """Why an angular velocity [rad/s] cannot be used (declared absent, or non-finite); None when it can."""
    absent = declared_absent("angular_velocity", covariance0)
    if absent:
        return absent
    if not all(math.isfinite(float(c)) for c in gyro_xyz):
        return f"angular velocity must be finite, got {tuple(float(c) for c in gyro_xyz)}"
    return None
