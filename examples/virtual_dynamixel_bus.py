"""Drive the virtual Dynamixel bus with ROBOTIS's own SDK, as a program would drive real servos.

Two simulated MX-106 (Protocol 2.0, ids 1 and 2) serve on a pseudo-terminal (``servo-ff virtual-bus`` in a
subprocess); ``dynamixel_sdk`` opens it like a USB adapter, pings both, enables torque, sync-writes a goal
position and sync-reads the present position until the servos arrive (or ``--timeout`` s pass). Control-table
addresses are the ROBOTIS e-manual's (MX 2.0).

    python examples/virtual_dynamixel_bus.py [--goal 2560]
"""

import argparse
import time

from dynamixel_sdk import COMM_SUCCESS, GroupSyncRead, GroupSyncWrite, PacketHandler, PortHandler

from servo_ff.bus.virtual_process import spawn_virtual_bus

TORQUE_ENABLE, GOAL_POSITION, PRESENT_POSITION = 64, 116, 132  # addresses; positions are 4 bytes, 4096/rev
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--goal", type=int, default=2560, help="goal position [counts] (2048 = centre)")
parser.add_argument("--timeout", type=float, default=10.0, help="wait for the servos to arrive [s]")
args = parser.parse_args()
ids = (1, 2)

bus = spawn_virtual_bus(["--ids", "1-2", "--servo", "mx106"])  # `servo-ff virtual-bus` in a subprocess
port = PortHandler(bus.device)  # the pty path, e.g. /dev/pts/5
try:
    assert port.openPort() and port.setBaudRate(1_000_000)
    port.ser.timeout = 0.002  # the SDK reads with timeout 0 (a busy loop): wait in the kernel, leave the bus a core
    ph = PacketHandler(2.0)
    for i in ids:
        for _attempt in range(5):  # a program retries a ping lost on the bus (here: a bus process given no CPU)
            model, result, error = ph.ping(port, i)
            if result == COMM_SUCCESS:
                break
        print(f"id {i}: model number {model} ({ph.getTxRxResult(result)})")
        ph.write1ByteTxRx(port, i, TORQUE_ENABLE, 1)
    write = GroupSyncWrite(port, ph, GOAL_POSITION, 4)
    for i in ids:
        write.addParam(i, args.goal.to_bytes(4, "little", signed=True))
    assert write.txPacket() == COMM_SUCCESS
    read = GroupSyncRead(port, ph, PRESENT_POSITION, 4)
    for i in ids:
        read.addParam(i)
    t0, pos = time.monotonic(), {}
    while time.monotonic() - t0 < args.timeout:
        if read.txRxPacket() == COMM_SUCCESS:
            pos = {i: read.getData(i, PRESENT_POSITION, 4) for i in ids}
            if all(abs(p - args.goal) <= 20 for p in pos.values()):
                break
        time.sleep(0.05)
    print(f"goal {args.goal} counts; present position after {time.monotonic() - t0:.2f} s: {pos}")
finally:
    port.closePort()
    bus.stop()
