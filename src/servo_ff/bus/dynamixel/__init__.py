"""Dynamixel servos (protocol keys ``dxl2`` and ``dxl1``, ROS-free): what is Dynamixel's own on top of the shared
bus layer (:mod:`servo_ff.bus`). Control tables: ``tables/*.yaml``.

* :mod:`.protocol`, :mod:`.stream` — Protocol 2.0: CRC-16, byte stuffing, packet encode/decode, streaming decoder;
  Protocol 1.0 packets are the shared :mod:`servo_ff.bus.protocol1` (Feetech STS speaks them too), :mod:`.p1_units`
  their Dynamixel units.
* :mod:`.sdk_adapters` (2.0), :mod:`.sdk_adapters_p1` (1.0) — dynamixel-sdk subclasses (select-based port, in-place
  stuffing, tolerant sync read) on the shared :mod:`servo_ff.bus.transactions` rules.
* :mod:`.bus` — :class:`~.bus.DynamixelBus` (2.0): one sync read + one sync write per cycle; :mod:`.bus_p1` —
  :class:`~.bus_p1.DynamixelBus1` (1.0); single-servo calls and setup in :mod:`.servo_transactions` (on the
  shared :mod:`servo_ff.bus.servo_transactions`).
* virtual bus: :mod:`.virtual_bus` (:class:`~.virtual_bus.VirtualBus2`, Protocol 2.0, with its :mod:`.instructions`
  and :mod:`.registers`) and :mod:`.virtual_p1` (:class:`~.virtual_p1.VirtualBus1`, Protocol 1.0), both on
  :class:`servo_ff.bus.virtual_bus.VirtualBus`.
"""
