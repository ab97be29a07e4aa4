"""The servo bus layer (ROS-free): what every servo family shares, with one sub-package per family.

* generic: :mod:`.bus_interface` (the :class:`~.bus_interface.ServoBus` interface and the bus of a protocol),
  :mod:`.control_table` (control tables as data, raw ↔ SI), :mod:`.bus_types` (config, state, health, errors),
  :mod:`.goals` and :mod:`.command_limits` (joint limits, velocity/effort limits), :mod:`.transactions` (which
  transaction a reply belongs to), :mod:`.select_port` (the receive side of every SDK port adapter),
  :mod:`.sync_read_group` (the tolerant sync read's send and result), :mod:`.sync_read_bus` (what every bus does
  around its per-cycle sync read), :mod:`.packet_common` (id range, packet checks), :mod:`.protocol1` (the
  Protocol 1.0 framing Dynamixel 1.0 and Feetech STS share), :mod:`.frame_buffer`;
* the virtual bus parts: :mod:`.virtual_bus` (:class:`~.virtual_bus.VirtualBus`, the serve loop every family's
  virtual bus subclasses), :mod:`.pty_transport`, :mod:`.registers`, :mod:`.virtual_servos`, :mod:`.faults`,
  :mod:`.thermal`, :mod:`.truth`, :mod:`.virtual_options`, :mod:`.virtual_process`;
* one sub-package per family: :mod:`.dynamixel` (Protocol 2.0 and 1.0 on dynamixel-sdk), :mod:`.feetech` (STS on
  scservo_sdk), each with its control tables under ``tables/``. No module here imports a family: it reaches one
  through its row of :data:`.families.FAMILIES`.
"""
