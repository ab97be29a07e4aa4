"""Dynamixel Protocol 2.0 I/O (ROS-free): packet codec, control tables, a dynamixel-sdk bus layer and a virtual
bus on a pty whose servos are the simulated actuators.

* :mod:`.protocol`, :mod:`.stream` — CRC-16, byte stuffing, packet encode/decode, streaming decoder.
* :mod:`.control_table` — MX-28/64/106 (2.0) and XM430 tables, raw ↔ SI conversions.
* :mod:`.sdk_adapters`, :mod:`.transactions` — dynamixel-sdk subclasses (select-based port, in-place stuffing,
  tolerant sync read) and which transaction a reply belongs to.
* :mod:`.bus` — :class:`~.bus.DynamixelBus`: one sync read + one sync write per cycle; its data in
  :mod:`.bus_types`, goal limits in :mod:`.goals`, single-servo calls and setup in :mod:`.servo_transactions`.
* :mod:`.virtual_bus` — :class:`~.virtual_bus.VirtualBus` (thread) and :func:`~.virtual_bus.spawn_virtual_bus`
  (:mod:`.virtual_process`), assembled from :mod:`.pty_transport`, :mod:`.registers`, :mod:`.instructions`,
  :mod:`.virtual_servos` (the shared servo bank), :mod:`.faults`, :mod:`.thermal`, :mod:`.virtual_options`;
  :mod:`.truth` records what it sent.
"""
