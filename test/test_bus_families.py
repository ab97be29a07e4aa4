"""The family registry (servo_ff.bus.families): every row names parts that exist and fit together, and every
front-end reads its protocols from it."""

from __future__ import annotations

import dataclasses

import pytest

from servo_ff.bus import control_table as ct
from servo_ff.bus.bus_interface import bus_class
from servo_ff.bus.families import FAMILIES, PROTOCOLS, family, load
from servo_ff.bus.select_port import SelectPort
from servo_ff.bus.sync_read_bus import SyncReadBus
from servo_ff.bus.virtual_bus import VirtualBus
from servo_ff.cli.virtual_bus import virtual_bus_class


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_row_names_parts_that_fit(protocol):
    f = family(protocol)
    bus = bus_class(protocol)
    assert issubclass(bus, SyncReadBus) and bus.__module__.startswith(f"servo_ff.bus.{f.package}.")
    assert issubclass(virtual_bus_class(protocol), VirtualBus)
    port = load(protocol, "port_handler")
    assert issubclass(port, SelectPort) and any(c.__module__.startswith(f.sdk) for c in port.__mro__)
    assert ct.control_table(f.default_servo).protocol == protocol
    table = ct.control_table(f.default_servo)
    assert f.velocity_limit[0] in table.by_name
    assert f.torque_limit is None or f.torque_limit[0] in table.by_name


def test_every_table_lives_in_the_folder_of_its_family():
    where = {p.stem: p.parent for d in {f.tables_dir for f in FAMILIES.values()} for p in d.glob("*.yaml")}
    assert set(where) == set(ct.CONTROL_TABLES) and len(where) >= 17
    for name, table in ct.CONTROL_TABLES.items():
        assert where[name] == family(table.protocol).tables_dir, name


def test_unknown_protocol_and_missing_sdk_are_one_clear_line(monkeypatch):
    with pytest.raises(ValueError, match=r"unknown bus protocol 'can'; known: dxl2, dxl1, sts"):
        bus_class("can")
    fake = dataclasses.replace(FAMILIES["sts"], bus_class="servo_ff_no_such_sdk.bus:Bus")
    monkeypatch.setitem(FAMILIES, "sts", fake)
    with pytest.raises(ValueError, match=r"needs servo_ff_no_such_sdk\.bus.*install feetech-servo-sdk"):
        bus_class("sts")
