"""python-dbusmock template: the part of wpa_supplicant's D-Bus API (fi.w1.wpa_supplicant1,
wpa_supplicant 2.x) that reachd reads.

The object tree is wpa_supplicant's: the main object /fi/w1/wpa_supplicant1 (Interfaces,
GetInterface, InterfaceAdded/InterfaceRemoved), interfaces at .../Interfaces/N (Ifname, State,
CurrentBSS, BSSs, SignalPoll) and their access points at .../Interfaces/N/BSSs/M (SSID and
BSSID as byte arrays, Signal in dBm as int16, Frequency in MHz as uint16). wpa_supplicant has no
ObjectManager: a client lists Interfaces and follows the signals. As wpa_supplicant does,
CurrentBSS is "/" while not associated, property changes are announced both with
org.freedesktop.DBus.Properties.PropertiesChanged and with the interface's own (deprecated)
PropertiesChanged(a{sv}) signal, and SignalPoll answers its a{sv} wrapped in a variant (its
introspection says a{sv}; the reply's signature is "v"): rssi (i, dBm), linkspeed (i, Mbit/s),
noise (i), frequency (u), avg-rssi (i).

GetInterface of an unknown name fails with fi.w1.wpa_supplicant1.InterfaceUnknown; SignalPoll
while not associated fails with org.freedesktop.DBus.Error.Failed ("Failed to read signal"), as
wpa_supplicant's do.

Control methods (interface org.freedesktop.DBus.Mock on the main object) are called by
Tests/python/wifictl.py.
"""

import dbus

from dbusmock import MOCK_IFACE, mockobject

BUS_NAME = "fi.w1.wpa_supplicant1"
MAIN_OBJ = "/fi/w1/wpa_supplicant1"
MAIN_IFACE = "fi.w1.wpa_supplicant1"
SYSTEM_BUS = True

INTERFACE_IFACE = "fi.w1.wpa_supplicant1.Interface"
BSS_IFACE = "fi.w1.wpa_supplicant1.BSS"
ERROR_INTERFACE_UNKNOWN = "fi.w1.wpa_supplicant1.InterfaceUnknown"

# interface path -> {"linkspeed": Mbit/s}
STATE = {}


def interface_path(index):
    return f"{MAIN_OBJ}/Interfaces/{index}"


def bss_path(index, bss):
    return f"{interface_path(index)}/BSSs/{bss}"


def load(mock, parameters):
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "Interfaces": dbus.Array([], signature="o"),
        "DebugLevel": dbus.String("info"),
        "Capabilities": dbus.Array(["ap", "ibss-rsn", "p2p", "interworking", "mesh", "ft", "sha384"], signature="s"),
        "EapMethods": dbus.Array(["MD5", "TLS", "PEAP", "TTLS"], signature="s"),
    }, signature="sv"))
    # A loop, not a comprehension: the code runs in exec(), whose locals a comprehension cannot see.
    code = (f"ret = None\n"
            f"for k in list(objects):\n"
            f"    if k.startswith('{MAIN_OBJ}/Interfaces/') and '/BSSs/' not in k "
            f"and objects[k].props['{INTERFACE_IFACE}']['Ifname'] == args[0]: ret = dbus.ObjectPath(k)\n"
            f"if ret is None: raise dbus.exceptions.DBusException("
            f"'wpa_supplicant knows nothing about this interface.', name='{ERROR_INTERFACE_UNKNOWN}')")
    mock.AddMethod(MAIN_IFACE, "GetInterface", "s", "o", code)


def announce(obj, changes):
    """Sets properties of an Interface or BSS and announces them both ways wpa_supplicant does."""
    interface = INTERFACE_IFACE if INTERFACE_IFACE in obj.props else BSS_IFACE
    # dbusmock's UpdateProperties cannot send object paths.
    obj.props[interface].update(changes)
    obj.EmitSignal(dbus.PROPERTIES_IFACE, "PropertiesChanged", "sa{sv}as",
                   [interface, dbus.Dictionary(changes, signature="sv"), dbus.Array([], signature="s")])
    obj.EmitSignal(interface, "PropertiesChanged", "a{sv}",
                   [dbus.Dictionary(changes, signature="sv")])


def announce_main(main, changes):
    main.props[MAIN_IFACE].update(changes)
    main.EmitSignal(dbus.PROPERTIES_IFACE, "PropertiesChanged", "sa{sv}as",
                    [MAIN_IFACE, dbus.Dictionary(changes, signature="sv"), dbus.Array([], signature="s")])
    main.EmitSignal(MAIN_IFACE, "PropertiesChanged", "a{sv}", [dbus.Dictionary(changes, signature="sv")])


class Interface(mockobject.DBusMockObject):
    """An interface object: SignalPoll answers as wpa_supplicant does, in a variant."""

    @dbus.service.method(INTERFACE_IFACE, in_signature="", out_signature="v")
    def SignalPoll(self):
        props = self.props[INTERFACE_IFACE]
        current = str(props["CurrentBSS"])
        if props["State"] != "completed" or current == "/":
            raise dbus.exceptions.DBusException("Failed to read signal", name="org.freedesktop.DBus.Error.Failed")
        bss = mockobject.objects[current].props[BSS_IFACE]
        rssi = int(bss["Signal"])
        return dbus.Dictionary({
            "rssi": dbus.Int32(rssi, variant_level=1),
            "linkspeed": dbus.Int32(STATE[self.path]["linkspeed"], variant_level=1),
            "noise": dbus.Int32(-92, variant_level=1),
            "frequency": dbus.UInt32(int(bss["Frequency"]), variant_level=1),
            "avg-rssi": dbus.Int32(rssi, variant_level=1),
        }, signature="sv", variant_level=1)


@dbus.service.method(MOCK_IFACE, in_signature="us", out_signature="o")
def AddInterface(self, index, ifname):
    """Adds interface N for IFNAME, disconnected; Interfaces changes and InterfaceAdded is sent."""
    path = interface_path(index)
    props = {
        "Ifname": dbus.String(ifname),
        "Driver": dbus.String("nl80211"),
        "State": dbus.String("disconnected"),
        "Scanning": dbus.Boolean(False),
        "CurrentBSS": dbus.ObjectPath("/"),
        "CurrentNetwork": dbus.ObjectPath("/"),
        "BSSs": dbus.Array([], signature="o"),
        "Networks": dbus.Array([], signature="o"),
    }
    self.AddObject(path, INTERFACE_IFACE, props, [("Scan", "a{sv}", "", ""), ("Disconnect", "", "", "")],
                   mock_class=Interface)
    STATE[path] = {"linkspeed": 0}
    interfaces = list(self.props[MAIN_IFACE]["Interfaces"]) + [dbus.ObjectPath(path)]
    announce_main(self, {"Interfaces": dbus.Array(interfaces, signature="o")})
    self.EmitSignal(MAIN_IFACE, "InterfaceAdded", "oa{sv}",
                    [dbus.ObjectPath(path), dbus.Dictionary(props, signature="sv")])
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="")
def RemoveInterface(self, index):
    """Removes interface N and its access points; InterfaceRemoved is sent."""
    path = interface_path(index)
    for child in [k for k in mockobject.objects if k.startswith(path + "/BSSs/")]:
        self.RemoveObject(child)
    self.RemoveObject(path)
    del STATE[path]
    interfaces = [p for p in self.props[MAIN_IFACE]["Interfaces"] if str(p) != path]
    announce_main(self, {"Interfaces": dbus.Array(interfaces, signature="o")})
    self.EmitSignal(MAIN_IFACE, "InterfaceRemoved", "o", [dbus.ObjectPath(path)])


@dbus.service.method(MOCK_IFACE, in_signature="uuaysqn", out_signature="o")
def AddBSS(self, index, bss, ssid, bssid, frequency, signal):
    """Adds access point M to interface N's scan list: SSID (any bytes), BSSID (text
    aa:bb:cc:dd:ee:ff, published as 6 bytes), FREQUENCY MHz, SIGNAL dBm; BSSAdded is sent."""
    path = bss_path(index, bss)
    props = {
        "SSID": dbus.Array([dbus.Byte(b) for b in ssid], signature="y"),
        "BSSID": dbus.Array([dbus.Byte(int(part, 16)) for part in bssid.split(":")], signature="y"),
        "Signal": dbus.Int16(signal),
        "Frequency": dbus.UInt16(frequency),
        "Privacy": dbus.Boolean(True),
        "Mode": dbus.String("infrastructure"),
        "Age": dbus.UInt32(0),
    }
    self.AddObject(path, BSS_IFACE, props, [])
    interface = mockobject.objects[interface_path(index)]
    announce(interface, {"BSSs": dbus.Array(list(interface.props[INTERFACE_IFACE]["BSSs"]) + [dbus.ObjectPath(path)],
                                            signature="o")})
    interface.EmitSignal(INTERFACE_IFACE, "BSSAdded", "oa{sv}",
                         [dbus.ObjectPath(path), dbus.Dictionary(props, signature="sv")])
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature="uui", out_signature="")
def Associate(self, index, bss, linkspeed):
    """Connects interface N through access point M at LINKSPEED Mbit/s: State associating,
    associated, 4way_handshake, then completed with CurrentBSS, as wpa_supplicant reports it."""
    interface = mockobject.objects[interface_path(index)]
    STATE[interface_path(index)]["linkspeed"] = linkspeed
    for state in ("associating", "associated", "4way_handshake"):
        announce(interface, {"State": dbus.String(state)})
    announce(interface, {"CurrentBSS": dbus.ObjectPath(bss_path(index, bss)), "State": dbus.String("completed")})


@dbus.service.method(MOCK_IFACE, in_signature="uub", out_signature="")
def Roam(self, index, bss, through_states):
    """Moves interface N to access point M: CurrentBSS changes; THROUGH_STATES: first
    associating and associated, then completed again (a reassociation as wpa_supplicant reports
    it), else the state stays completed (a fast transition)."""
    interface = mockobject.objects[interface_path(index)]
    if through_states:
        for state in ("associating", "associated"):
            announce(interface, {"State": dbus.String(state)})
        announce(interface, {"CurrentBSS": dbus.ObjectPath(bss_path(index, bss)), "State": dbus.String("completed")})
    else:
        announce(interface, {"CurrentBSS": dbus.ObjectPath(bss_path(index, bss))})


@dbus.service.method(MOCK_IFACE, in_signature="uun", out_signature="")
def SetSignal(self, index, bss, signal):
    """Sets access point M's Signal (dBm); SignalPoll follows it."""
    announce(mockobject.objects[bss_path(index, bss)], {"Signal": dbus.Int16(signal)})


@dbus.service.method(MOCK_IFACE, in_signature="ui", out_signature="")
def SetLinkSpeed(self, index, linkspeed):
    """Sets the linkspeed (Mbit/s) SignalPoll reports for interface N."""
    STATE[interface_path(index)]["linkspeed"] = linkspeed


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="")
def Disconnect(self, index):
    """Disconnects interface N: State disconnected, CurrentBSS "/"."""
    announce(mockobject.objects[interface_path(index)],
             {"State": dbus.String("disconnected"), "CurrentBSS": dbus.ObjectPath("/")})
