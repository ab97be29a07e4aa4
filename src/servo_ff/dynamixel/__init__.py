"""Dynamixel Protocol 2.0 I/O (ROS-free): packet codec, control tables, a dynamixel-sdk bus layer and a virtual
bus on a pty whose servos are the simulated actuators.

* :mod:`.protocol` — CRC-16, byte stuffing, packet encode/decode, streaming decoder.
* :mod:`.control_table` — MX-28/64/106 (2.0) and XM430 tables, raw ↔ SI conversions.
* :mod:`.sdk_adapters` — dynamixel-sdk subclasses: select-based port, in-place stuffing, tolerant sync read.
* :mod:`.bus` — :class:`~.bus.DynamixelBus` on dynamixel-sdk: one sync read + one sync write per cycle.
* :mod:`.virtual_bus` — :class:`~.virtual_bus.VirtualBus` (thread) and :func:`~.virtual_bus.spawn_virtual_bus`.
"""
