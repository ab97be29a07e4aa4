"""Feetech SCS/STS servos (protocol key ``sts``): the bus on the stock ``scservo_sdk`` and the virtual bus.

The STS speaks the Protocol-1.0 framing of :mod:`servo_ff.bus.protocol1` (``FF FF ID LEN INST params
CHECKSUM``) with Feetech's SYNC_READ (0x82), one-byte addresses and lengths, sign-magnitude values and a status
error byte that carries the servo's status bits. Control tables: ``bus/feetech/tables/sts3215.yaml``,
``sts3250.yaml``. One concept per module:

* client: :mod:`.status` (status bits), :mod:`.stream` (status-stream scanner), :mod:`.port` (PortHandler with
  reply timing and the late-reply ledger), :mod:`.packets` (packet handler and the tolerant sync read),
  :mod:`.transactions` (single-servo transactions), :mod:`.bus` (:class:`~.bus.FeetechBus`, ``FAMILIES["sts"]``);
* virtual bus: :mod:`.registers` (register memory with the EPROM lock), :mod:`.servos` (physics wiring),
  :mod:`.instructions` (instruction handlers), :mod:`.virtual_bus` (:class:`~.virtual_bus.StsVirtualBus`).
"""
