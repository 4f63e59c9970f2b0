"""python-dbusmock template: the part of iwd (net.connman.iwd, 2.x) that reachd reads.

The object tree is iwd's: the ObjectManager at /, the daemon at /net/connman/iwd, adapters at
/net/connman/iwd/N, devices at /net/connman/iwd/0/N (Device, Station and StationDiagnostic
interfaces), networks below their device at <device>/<hex of the SSID>_<type>, and access
points (BasicServiceSet) below their network at <network>/<address as 12 hex digits>. Names,
types and paths follow iwd's doc/station-api.txt, network-api.txt, basic-service-set.txt,
station-diagnostic-api.txt and the SignalLevelAgent section of station-api.txt; where a
document and iwd's code differ (GetDiagnostics' rate keys), the code's names are used:
TxBitrate and RxBitrate, in 100 kbit/s.

Station.ConnectedNetwork and ConnectedAccessPoint are present only while connected: iwd drops
them and lists them as invalidated in PropertiesChanged, and so does this mock. GetDiagnostics
fails with net.connman.iwd.NotConnected while disconnected.

RegisterSignalLevelAgent(o path, an levels) takes descending dBm thresholds; one agent at a time
(a second: net.connman.iwd.AlreadyExists). As iwd does, the mock calls the agent's Changed(o
device, y level) (no reply expected) at once, and again whenever SetSignal moves the RSSI into
another level: level 0 at or above the first threshold, N below the last. Every registration,
unregistration and Changed call is kept for AgentCalls.

Control methods (interface org.freedesktop.DBus.Mock on /) are called by Tests/python/wifictl.py.
"""

import dbus
import dbus.lowlevel

from dbusmock import MOCK_IFACE, OBJECT_MANAGER_IFACE, mockobject

BUS_NAME = "net.connman.iwd"
MAIN_OBJ = "/"
MAIN_IFACE = OBJECT_MANAGER_IFACE
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

BASE = "/net/connman/iwd"
DAEMON_IFACE = "net.connman.iwd.Daemon"
ADAPTER_IFACE = "net.connman.iwd.Adapter"
DEVICE_IFACE = "net.connman.iwd.Device"
STATION_IFACE = "net.connman.iwd.Station"
DIAGNOSTIC_IFACE = "net.connman.iwd.StationDiagnostic"
NETWORK_IFACE = "net.connman.iwd.Network"
BSS_IFACE = "net.connman.iwd.BasicServiceSet"
AGENT_IFACE = "net.connman.iwd.SignalLevelAgent"
ADAPTER = f"{BASE}/0"

# iwd's own error names (src/dbus.c).
ERROR_NOT_CONNECTED = "net.connman.iwd.NotConnected"
ERROR_ALREADY_EXISTS = "net.connman.iwd.AlreadyExists"
ERROR_NOT_FOUND = "net.connman.iwd.NotFound"
ERROR_INVALID_ARGUMENTS = "net.connman.iwd.InvalidArguments"

# device path -> {"diagnostics": dict, "agent": (bus name, path, levels) or None, "level": int or None}
STATE = {}
AGENT_CALLS = []


def device_path(index):
    return f"{ADAPTER}/{index}"


def network_path(device, ssid, kind):
    return f"{device}/{ssid.encode('utf-8').hex()}_{kind}"


def bss_path(network, address):
    return f"{network}/{address.replace(':', '').lower()}"


def load(mock, parameters):
    mock.AddObject(BASE, DAEMON_IFACE, {}, [
        ("GetInfo", "", "a{sv}", "ret = {'Version': dbus.String('3.10', variant_level=1), "
                                 "'StateDirectory': dbus.String('/var/lib/iwd', variant_level=1), "
                                 "'NetworkConfigurationEnabled': dbus.Boolean(False, variant_level=1)}"),
    ])
    mock.AddObject(ADAPTER, ADAPTER_IFACE, {
        "Powered": dbus.Boolean(True),
        "Name": dbus.String("phy0"),
        "Model": dbus.String("reachd mock"),
        "Vendor": dbus.String("reachd"),
        "SupportedModes": dbus.Array(["station", "ap", "ad-hoc"], signature="s"),
    }, [])


class Device(mockobject.DBusMockObject):
    """A device object: iwd's Station methods that need the caller (the signal-level agent) and
    StationDiagnostic.GetDiagnostics."""

    @dbus.service.method(STATION_IFACE, in_signature="oan", out_signature="", sender_keyword="sender")
    def RegisterSignalLevelAgent(self, path, levels, sender=None):
        state = STATE[self.path]
        if state["agent"] is not None:
            raise dbus.exceptions.DBusException("agent already registered", name=ERROR_ALREADY_EXISTS)
        levels = [int(level) for level in levels]
        if not levels or any(a <= b for a, b in zip(levels, levels[1:])):
            raise dbus.exceptions.DBusException("levels must be descending", name=ERROR_INVALID_ARGUMENTS)
        state["agent"] = (str(sender), str(path), levels)
        state["level"] = None
        AGENT_CALLS.append(f"Register {path} {','.join(str(level) for level in levels)}")
        notify_agent(self.path)

    @dbus.service.method(STATION_IFACE, in_signature="o", out_signature="")
    def UnregisterSignalLevelAgent(self, path):
        state = STATE[self.path]
        if state["agent"] is None or state["agent"][1] != str(path):
            raise dbus.exceptions.DBusException("no such agent", name=ERROR_NOT_FOUND)
        state["agent"] = None
        AGENT_CALLS.append(f"Unregister {path}")

    @dbus.service.method(DIAGNOSTIC_IFACE, in_signature="", out_signature="a{sv}")
    def GetDiagnostics(self):
        if self.props[STATION_IFACE]["State"] not in ("connected", "roaming"):
            raise dbus.exceptions.DBusException("not connected", name=ERROR_NOT_CONNECTED)
        return dbus.Dictionary(STATE[self.path]["diagnostics"], signature="sv")


def update(obj, interface, changes, invalidated=()):
    """Sets properties and emits one PropertiesChanged, as iwd does (dbusmock's UpdateProperties
    cannot send object paths)."""
    obj.props[interface].update(changes)
    obj.EmitSignal(dbus.PROPERTIES_IFACE, "PropertiesChanged", "sa{sv}as", [
        interface, dbus.Dictionary(changes, signature="sv"), dbus.Array(list(invalidated), signature="s")])


def level_for(rssi, levels):
    """iwd's level: how many of the (descending) thresholds the RSSI is below."""
    return sum(1 for threshold in levels if rssi < threshold)


def notify_agent(device):
    """Calls the agent's Changed when the level moved (iwd sends no reply request: [noreply])."""
    state = STATE[device]
    agent = state["agent"]
    rssi = state["diagnostics"].get("RSSI")
    if agent is None or rssi is None:
        return
    level = level_for(int(rssi), agent[2])
    if level == state["level"]:
        return
    state["level"] = level
    AGENT_CALLS.append(f"Changed {device} {level}")
    message = dbus.lowlevel.MethodCallMessage(destination=agent[0], path=agent[1], interface=AGENT_IFACE, method="Changed")
    message.append(dbus.ObjectPath(device), dbus.Byte(level), signature="oy")
    message.set_no_reply(True)
    for location in mockobject.objects[device].locations:
        location[0].send_message(message)


@dbus.service.method(MOCK_IFACE, in_signature="uss", out_signature="o")
def AddStation(self, index, name, address):
    """Adds device N (interface NAME, hardware ADDRESS) in station mode, disconnected."""
    path = device_path(index)
    self.AddObject(path, DEVICE_IFACE, {
        "Name": dbus.String(name),
        "Address": dbus.String(address),
        "Powered": dbus.Boolean(True),
        "Adapter": dbus.ObjectPath(ADAPTER),
        "Mode": dbus.String("station"),
    }, [], mock_class=Device)
    device = mockobject.objects[path]
    device.AddProperties(STATION_IFACE, dbus.Dictionary({
        "State": dbus.String("disconnected"),
        "Scanning": dbus.Boolean(False),
    }, signature="sv"))
    device.props[DIAGNOSTIC_IFACE] = {}
    device.AddMethods(STATION_IFACE, [("Scan", "", "", ""), ("Disconnect", "", "", ""),
                                      ("GetOrderedNetworks", "", "a(on)", "ret = []")])
    STATE[path] = {"diagnostics": {}, "agent": None, "level": None}
    self.object_manager_emit_added(path)
    return dbus.ObjectPath(path)


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="")
def RemoveStation(self, index):
    """Removes device N (InterfacesRemoved); a registered agent is released first."""
    path = device_path(index)
    agent = STATE[path]["agent"]
    if agent is not None:
        AGENT_CALLS.append(f"Release {agent[1]}")
    for child in sorted((k for k in mockobject.objects if k.startswith(path + "/")), reverse=True):
        remove(self, child)
    remove(self, path)
    del STATE[path]


def remove(main, path):
    interfaces = list(mockobject.objects[path].props.keys())
    main.RemoveObject(path)
    main.EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesRemoved", "oas",
                    [dbus.ObjectPath(path), dbus.Array(interfaces, signature="s")])


def ensure_network(main, device, ssid, kind):
    path = network_path(device, ssid, kind)
    if path not in mockobject.objects:
        main.AddObject(path, NETWORK_IFACE, {
            "Name": dbus.String(ssid),
            "Connected": dbus.Boolean(False),
            "Device": dbus.ObjectPath(device),
            "Type": dbus.String(kind),
            "ExtendedServiceSet": dbus.Array([], signature="o"),
        }, [("Connect", "", "", "")])
        main.object_manager_emit_added(path)
    return path


def ensure_bss(main, network, address):
    path = bss_path(network, address)
    if path not in mockobject.objects:
        main.AddObject(path, BSS_IFACE, {"Address": dbus.String(address.upper())}, [])
        main.object_manager_emit_added(path)
        owner = mockobject.objects[network]
        members = list(owner.props[NETWORK_IFACE]["ExtendedServiceSet"]) + [dbus.ObjectPath(path)]
        update(owner, NETWORK_IFACE, {"ExtendedServiceSet": dbus.Array(members, signature="o")})
    return path


def set_diagnostics(device, address, frequency, rssi, tx_rate):
    diagnostics = STATE[device]["diagnostics"]
    diagnostics.update({
        "ConnectedBss": dbus.String(address.upper(), variant_level=1),
        "Frequency": dbus.UInt32(frequency, variant_level=1),
        "Security": dbus.String("WPA2-Personal", variant_level=1),
        "RSSI": dbus.Int16(rssi, variant_level=1),
        "AverageRSSI": dbus.Int16(rssi, variant_level=1),
        "TxBitrate": dbus.UInt32(tx_rate, variant_level=1),
        "RxBitrate": dbus.UInt32(tx_rate, variant_level=1),
        "TxMode": dbus.String("802.11ac", variant_level=1),
        "TxMCS": dbus.Byte(9, variant_level=1),
        "InactiveTime": dbus.UInt32(40, variant_level=1),
        "ConnectedTime": dbus.UInt32(1, variant_level=1),
    })


@dbus.service.method(MOCK_IFACE, in_signature="ussqn", out_signature="")
def Connect(self, index, ssid, address, frequency, rssi):
    """Connects device N to network SSID (type psk) through access point ADDRESS on FREQUENCY
    MHz at RSSI dBm: State connecting, then connected with ConnectedNetwork and
    ConnectedAccessPoint; Network.Connected true; diagnostics from the figures."""
    device = device_path(index)
    station = mockobject.objects[device]
    network = ensure_network(self, device, ssid, "psk")
    bss = ensure_bss(self, network, address)
    update(station, STATION_IFACE, {"State": dbus.String("connecting")})
    set_diagnostics(device, address, frequency, rssi, 8667)
    update(mockobject.objects[network], NETWORK_IFACE, {"Connected": dbus.Boolean(True)})
    update(station, STATION_IFACE, {
        "State": dbus.String("connected"),
        "ConnectedNetwork": dbus.ObjectPath(network),
        "ConnectedAccessPoint": dbus.ObjectPath(bss),
    })
    notify_agent(device)


@dbus.service.method(MOCK_IFACE, in_signature="usqn", out_signature="")
def Roam(self, index, address, frequency, rssi):
    """Moves device N to access point ADDRESS of the same network: State roaming, then
    ConnectedAccessPoint and connected again, as iwd reports a roam."""
    device = device_path(index)
    station = mockobject.objects[device]
    network = str(station.props[STATION_IFACE]["ConnectedNetwork"])
    bss = ensure_bss(self, network, address)
    update(station, STATION_IFACE, {"State": dbus.String("roaming")})
    set_diagnostics(device, address, frequency, rssi, 8667)
    update(station, STATION_IFACE, {"ConnectedAccessPoint": dbus.ObjectPath(bss),
                                             "State": dbus.String("connected")})
    notify_agent(device)


@dbus.service.method(MOCK_IFACE, in_signature="un", out_signature="")
def SetSignal(self, index, rssi):
    """Sets device N's RSSI (diagnostics RSSI and AverageRSSI); calls the agent when the level
    moved. No property changes: iwd publishes the signal only through the agent."""
    device = device_path(index)
    STATE[device]["diagnostics"]["RSSI"] = dbus.Int16(rssi, variant_level=1)
    STATE[device]["diagnostics"]["AverageRSSI"] = dbus.Int16(rssi, variant_level=1)
    notify_agent(device)


@dbus.service.method(MOCK_IFACE, in_signature="usv", out_signature="")
def SetDiagnostic(self, index, key, value):
    """Sets (or adds) one GetDiagnostics entry of device N, typed as the caller sent it."""
    STATE[device_path(index)]["diagnostics"][str(key)] = value


@dbus.service.method(MOCK_IFACE, in_signature="u", out_signature="")
def Disconnect(self, index):
    """Disconnects device N: State disconnected, ConnectedNetwork and ConnectedAccessPoint gone
    (listed as invalidated), Network.Connected false."""
    device = device_path(index)
    station = mockobject.objects[device]
    props = station.props[STATION_IFACE]
    network = props.pop("ConnectedNetwork", None)
    props.pop("ConnectedAccessPoint", None)
    STATE[device]["diagnostics"] = {}
    STATE[device]["level"] = None
    update(station, STATION_IFACE, {"State": dbus.String("disconnected")},
           invalidated=["ConnectedNetwork", "ConnectedAccessPoint"])
    if network is not None:
        update(mockobject.objects[str(network)], NETWORK_IFACE, {"Connected": dbus.Boolean(False)})


@dbus.service.method(MOCK_IFACE, in_signature="", out_signature="as")
def AgentCalls(self):
    """What happened with signal-level agents, in order: "Register /path -55,-66,-77,-88",
    "Changed /net/connman/iwd/0/1 2", "Unregister /path", "Release /path"."""
    return dbus.Array(AGENT_CALLS, signature="s")
