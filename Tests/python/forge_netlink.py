#!/usr/bin/env python3
"""Plays another process on the machine: multicasts an RTM_NEWLINK for a link that does not
exist to the netlink link group (RTMGRP_LINK), as only the kernel should. Every socket in this
network namespace that follows links receives it, with this process's port as its sender.
Needs CAP_NET_ADMIN (root). Run it in a test namespace (`ip netns exec`).

usage: forge_netlink.py NAME
"""
import socket
import struct
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
name = sys.argv[1].encode() + b"\0"
RTM_NEWLINK, IFLA_IFNAME, RTMGRP_LINK, IFF_UP = 16, 3, 1, 1
attribute = struct.pack("=HH", 4 + len(name), IFLA_IFNAME) + name
attribute += b"\0" * (-len(attribute) % 4)
# ifinfomsg: family, pad, type (ARPHRD_ETHER), index 4000, flags, change.
body = struct.pack("=BBHiII", 0, 0, 1, 4000, IFF_UP, 0)
message = struct.pack("=IHHII", 16 + len(body) + len(attribute), RTM_NEWLINK, 0, 0, 0) + body + attribute
sender = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
sender.bind((0, 0))
sender.sendto(message, (0, RTMGRP_LINK))
print("sent", len(message))
