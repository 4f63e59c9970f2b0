#!/usr/bin/env python3
"""Plays a hostile peer on a bus: sends logind's PrepareForSleep(true), once broadcast and once
addressed to every other connection on the bus but logind's (a signal addressed to a connection
reaches it whatever its match rules say).

usage: fake_prepare_for_sleep.py BUS_ADDRESS
"""
import sys

import dbus
import dbus.lowlevel

bus = dbus.bus.BusConnection(sys.argv[1])
me = bus.get_unique_name()
driver = dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")
owner = driver.GetNameOwner("org.freedesktop.login1")
targets = [None] + [name for name in driver.ListNames() if name.startswith(":") and name not in (me, owner)]
for target in targets:
    message = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
    message.append(True, signature="b")
    if target:
        message.set_destination(target)
    bus.send_message(message)
bus.flush()
print(len(targets))
